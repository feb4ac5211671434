import { useState } from 'react';
import { Box, Button, IconButton, Stack, TextField, Tooltip, Typography } from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import RefreshIcon from '@mui/icons-material/Refresh';
import EditIcon from '@mui/icons-material/EditOutlined';
import DeleteIcon from '@mui/icons-material/DeleteOutline';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import { List, useListContext, useNotify, useRefresh, useTranslate, type RaRecord } from 'react-admin';
import { ColorTag } from '../shared/ColorTag';
import { GwTable, type Column } from '../shared/GwTable';
import { GwPagination } from '../shared/GwPagination';
import { FILTER_BAR_SX, LIST_SX } from '../shared/styles';
import { readPageSize } from '../shared/pageSize';
import { useCopy } from '../shared/copy';
import { useDisplaySettings, useNotifyError, useRouteDrawer } from '../shared/hooks';
import { formatQuota, formatTimestamp } from '../shared/format';
import { useGateway } from '../shared/api';
import { redemptionStatusKey } from './redemptionCodes';
import { RedemptionEditDrawer } from './RedemptionEdit';
import { useConfirmedAction } from '../shared/confirm';

type Row = RaRecord & Record<string, any>;
const TONE = { unused: 'green', disabled: 'red', used: 'grey', unknown: 'grey' } as const;

export const RedemptionList = () => {
  const drawer = useRouteDrawer('redemption');
  return (
    <>
      <List resource="redemption" perPage={readPageSize('redemption')} actions={false} pagination={<GwPagination />} empty={false} exporter={false} title="res.redemption.title" storeKey={false} sx={LIST_SX} disableSyncWithLocation>
        <Body openCreate={drawer.openCreate} openEdit={drawer.openEdit} />
      </List>
      <RedemptionEditDrawer creating={drawer.creating} editId={drawer.editId} onClose={drawer.close} />
    </>
  );
};

const Body = ({ openCreate, openEdit }: { openCreate: () => void; openEdit: (id: string | number) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const { ask: askConfirm, dialog: confirmDialog } = useConfirmedAction(refresh, notifyError);
  const dp = useGateway();
  const display = useDisplaySettings();
  const { copy, dialog } = useCopy();
  const { selectedIds, onUnselectItems, data, setFilters, filterValues } = useListContext<Row>();
  const [keyword, setKeyword] = useState(String(filterValues.keyword ?? ''));

  const setStatus = async (row: Row, status: number) => {
    try {
      await dp.updateMany('redemption', { ids: [row.id], data: { status } });
      notify('res.common.op_success', { type: 'success' });
      refresh();
    } catch (e) {
      notifyError(e);
    }
  };

  const columns: Column<Row>[] = [
    { key: 'id', label: 'res.redemption.fields.id', render: (r) => r.id, width: 60 },
    { key: 'name', label: 'res.redemption.fields.name', render: (r) => r.name },
    { key: 'status', label: 'res.redemption.fields.status', render: (r) => { const k = redemptionStatusKey(Number(r.status)); return <ColorTag tone={TONE[k as keyof typeof TONE]} label={translate(`res.redemption.status.${k}`)} />; } },
    { key: 'quota', label: 'res.redemption.fields.quota', render: (r) => formatQuota(r.quota, display) },
    { key: 'created_time', label: 'res.redemption.fields.created_time', render: (r) => formatTimestamp(r.created_time) },
    { key: 'used_user_id', label: 'res.redemption.fields.used_user_id', render: (r) => (Number(r.used_user_id) ? r.used_user_id : translate('res.common.none')) },
    {
      key: 'actions',
      label: 'res.common.actions',
      render: (r) => {
        const s = Number(r.status);
        return (
          <Stack direction="row" spacing={0.5} alignItems="center">
            <Tooltip title={translate('res.redemption.copy')}>
              <span>
                <IconButton size="small" disabled={!r.key} onClick={() => copy(String(r.key))}>
                  <ContentCopyIcon fontSize="small" />
                </IconButton>
              </span>
            </Tooltip>
            {s === 1 ? (
              <Button size="small" color="warning" onClick={() => setStatus(r, 2)}>
                {translate('res.common.disable')}
              </Button>
            ) : (
              <Button size="small" color="success" disabled={s === 3} onClick={() => setStatus(r, 1)}>
                {translate('res.common.enable')}
              </Button>
            )}
            <Tooltip title={translate('res.common.edit')}>
              <span>
                <IconButton size="small" color="primary" disabled={s !== 1} onClick={() => openEdit(r.id)}>
                  <EditIcon fontSize="small" />
                </IconButton>
              </span>
            </Tooltip>
            <Tooltip title={translate('res.common.delete')}>
              <IconButton size="small" color="error" onClick={() => askConfirm({ content: 'res.redemption.confirm.delete', action: async () => { await dp.delete('redemption', { id: r.id, previousData: r }); notify('res.common.deleted', { type: 'success' }); } })}>
                <DeleteIcon fontSize="small" />
              </IconButton>
            </Tooltip>
          </Stack>
        );
      },
    },
  ];

  return (
    <Box>
      <Box component="form" noValidate onSubmit={(e) => { e.preventDefault(); setFilters({ keyword: keyword.trim() || undefined }, {}); }} sx={{ ...FILTER_BAR_SX, p: 2, display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center' }}>
        <Button variant="contained" startIcon={<AddIcon />} onClick={openCreate}>
          {translate('res.redemption.add')}
        </Button>
        <Button
          variant="outlined"
          onClick={() => {
            const keys = (data ?? []).filter((r) => selectedIds.includes(r.id)).map((r) => String(r.key));
            if (!keys.length) return notify('res.redemption.msg.select_one', { type: 'warning' });
            copy(keys.join('\n'));
          }}
        >
          {translate('res.redemption.copy_selected')}
        </Button>
        <Button
          variant="outlined"
          color="error"
          onClick={() => {
            if (!selectedIds.length) return notify('res.redemption.msg.select_one', { type: 'warning' });
            askConfirm({ content: 'res.redemption.confirm.batch_delete', action: async () => { await dp.deleteMany('redemption', { ids: selectedIds }); notify('res.redemption.msg.deleted_count', { type: 'success', messageArgs: { count: selectedIds.length } }); onUnselectItems(); } });
          }}
        >
          {translate('res.common.delete_selected')}
        </Button>
        <Box sx={{ flex: 1 }} />
        <TextField size="small" label={translate('res.redemption.search')} value={keyword} onChange={(e) => setKeyword(e.target.value)} />
        <Button type="submit" variant="contained">
          {translate('res.common.search')}
        </Button>
        <IconButton onClick={() => refresh()}>
          <RefreshIcon />
        </IconButton>
      </Box>
      <GwTable<Row> columns={columns} selectable emptyText="res.redemption.empty" />
      {confirmDialog}
      {dialog}
      <Typography sx={{ display: 'none' }} />
    </Box>
  );
};
