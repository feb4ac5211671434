import { useState } from 'react';
import { Box, Button, FormControlLabel, IconButton, Switch, Tooltip } from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import RefreshIcon from '@mui/icons-material/Refresh';
import { ColumnsButton, useListContext, useNotify, useRefresh, useTranslate } from 'react-admin';
import { useConfirmedAction } from '../shared/confirm';
import { useNotifyError } from '../shared/hooks';
import { useChannelOps } from './useChannelOps';
import { BatchTagDialog } from './BatchTagDialog';
import { BulkResultDialog, type BulkResult } from '../shared/BulkResultDialog';
import { bulkItemsFromAnswer } from '../../lib/bulk';
import { channelReportItems } from './channelBulk';
import { BalanceSummaryDialog } from './BalanceSummaryDialog';
import { balanceSummaryFrom, type BalanceSummary } from './balanceSummary';
import { ChannelTestSummary } from './ChannelTestSummary';

export interface ChannelListActionsProps {
  idSort: boolean;
  setIdSort: (v: boolean) => void;
  tagMode: boolean;
  setTagMode: (v: boolean) => void;
  openCreate: () => void;
}

/**
 * The channel list's toolbar: add, the all-channel operations (test, balances, delete disabled),
 * the batch operations on the selection, the id-sort and tag-mode switches, columns and refresh.
 */
export const ChannelListActions = ({ idSort, setIdSort, tagMode, setTagMode, openCreate }: ChannelListActionsProps) => {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const notifyError = useNotifyError();
  const { dp } = useChannelOps();
  const { selectedIds, onUnselectItems, data } = useListContext();
  const { ask, dialog: confirmDialog } = useConfirmedAction(refresh, notifyError);
  const [batchTagOpen, setBatchTagOpen] = useState(false);
  const [result, setResult] = useState<BulkResult | null>(null);
  const [balances, setBalances] = useState<BalanceSummary | null>(null);
  const [testRun, setTestRun] = useState(0);
  const selectedCount = selectedIds.length;

  // The server's per-item answer is shown item by item when it gives one; else its message.
  const allChannels = (title: string, content: string, call: () => Promise<{ message: string; data?: unknown }>) =>
    ask({
      title,
      content,
      action: async () => {
        const r = await call();
        const items = bulkItemsFromAnswer(r.data);
        if (items.length) setResult({ title, message: r.message, items });
        else notify(r.message || 'res.common.op_success', { type: 'info' });
      },
    });

  return (
    <Box sx={{ p: 2, display: 'flex', flexWrap: 'wrap', gap: 1, alignItems: 'center' }}>
      <Button variant="contained" startIcon={<AddIcon />} onClick={openCreate}>
        {translate('res.channel.add')}
      </Button>
      <Button
        variant="outlined"
        onClick={() =>
          allChannels('res.channel.test_all', 'res.channel.confirm.test_all', async () => {
            const r = await dp.testAllChannels();
            setTestRun((n) => n + 1);
            return r;
          })
        }
      >
        {translate('res.channel.test_all')}
      </Button>
      <ChannelTestSummary run={testRun} />
      <Button
        variant="outlined"
        onClick={() =>
          ask({
            title: 'res.channel.update_all_balance',
            content: 'res.channel.confirm.update_all_balance',
            action: async () => setBalances(balanceSummaryFrom((await dp.updateAllBalances()).data)),
          })
        }
      >
        {translate('res.channel.update_all_balance')}
      </Button>
      <Button
        variant="outlined"
        data-testid="channel-fix-abilities"
        onClick={() =>
          ask({
            title: 'res.channel.fix_abilities',
            content: 'res.channel.confirm.fix_abilities',
            action: async () => {
              const r = await dp.fixAbilities();
              const items = bulkItemsFromAnswer(r.data);
              setResult({
                title: 'res.channel.fix_abilities',
                message:
                  typeof r.data === 'number'
                    ? translate('res.channel.msg.abilities_fixed', { count: r.data })
                    : r.message || translate('res.common.op_success'),
                items,
              });
            },
          })
        }
      >
        {translate('res.channel.fix_abilities')}
      </Button>
      <Button
        variant="outlined"
        color="error"
        onClick={() =>
          ask({
            title: 'res.channel.delete_disabled',
            content: 'res.channel.confirm.delete_disabled',
            action: async () => {
              const r = await dp.deleteDisabledChannels();
              notify('res.channel.msg.deleted_count', { type: 'success', messageArgs: { count: r.count } });
            },
          })
        }
      >
        {translate('res.channel.delete_disabled')}
      </Button>
      <Button
        variant="outlined"
        color="error"
        disabled={selectedCount === 0}
        onClick={() => {
          if (!selectedCount) return notify('res.channel.msg.select_to_delete', { type: 'warning' });
          ask({
            title: 'res.channel.batch_delete',
            content: 'res.channel.confirm.batch_delete',
            action: async () => {
              const r = await dp.deleteChannels(selectedIds);
              onUnselectItems();
              // Per id what happened, named as in the list, in the console's language.
              const items = channelReportItems(r.items, data ?? [], 'delete', translate);
              if (items.length)
                setResult({ title: 'res.channel.batch_delete', message: translate('res.channel.msg.deleted_count', { count: r.count }), items });
              else notify('res.channel.msg.deleted_count', { type: 'success', messageArgs: { count: r.count } });
            },
          });
        }}
      >
        {translate('res.channel.batch_delete')} {selectedCount ? `(${selectedCount})` : ''}
      </Button>
      <Button variant="outlined" onClick={() => (selectedCount ? setBatchTagOpen(true) : notify('res.channel.msg.select_for_tag', { type: 'warning' }))}>
        {translate('res.channel.batch_tag')}
      </Button>
      <Box sx={{ flex: 1 }} />
      <FormControlLabel
        control={<Switch size="small" checked={idSort} onChange={(e) => setIdSort(e.target.checked)} />}
        label={translate('res.channel.id_sort')}
      />
      <FormControlLabel
        control={
          <Switch
            size="small"
            checked={tagMode}
            onChange={(e) => {
              setTagMode(e.target.checked);
              onUnselectItems();
            }}
          />
        }
        label={translate('res.channel.tag_mode')}
      />
      <ColumnsButton />
      <Tooltip title={translate('res.common.refresh')}>
        <IconButton onClick={() => refresh()}>
          <RefreshIcon />
        </IconButton>
      </Tooltip>
      {confirmDialog}
      <BulkResultDialog result={result} onClose={() => setResult(null)} />
      <BalanceSummaryDialog summary={balances} onClose={() => setBalances(null)} />
      <BatchTagDialog open={batchTagOpen} onClose={() => setBatchTagOpen(false)} onResult={setResult} />
    </Box>
  );
};
