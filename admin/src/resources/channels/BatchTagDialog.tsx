import { useState } from 'react';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { useListContext, useNotify, useRefresh, useTranslate } from 'react-admin';
import { useGateway } from '../shared/api';
import { useNotifyError } from '../shared/hooks';
import type { BulkResult } from '../shared/BulkResultDialog';
import { channelReportItems } from './channelBulk';

/** Sets one tag on the selected channels; the per-channel outcome goes to `onResult` (the bulk report). */
export const BatchTagDialog = ({ open, onClose, onResult }: { open: boolean; onClose: () => void; onResult: (r: BulkResult) => void }) => {
  const translate = useTranslate();
  const notify = useNotify();
  const notifyError = useNotifyError();
  const refresh = useRefresh();
  const dp = useGateway();
  const { selectedIds, onUnselectItems, data } = useListContext();
  const [tag, setTag] = useState('');

  const submit = async () => {
    if (!selectedIds.length) return notify('res.channel.msg.select_for_tag', { type: 'warning' });
    if (!tag.trim()) return notify('res.channel.msg.tag_required', { type: 'warning' });
    try {
      const r = await dp.batchSetTag(selectedIds, tag.trim());
      const items = channelReportItems(r.items, data ?? [], 'tag', translate);
      if (items.length) onResult({ title: 'res.channel.batch_tag', message: translate('res.channel.msg.tag_set_count', { count: r.count }), items });
      else notify('res.channel.msg.tag_set_count', { type: 'success', messageArgs: { count: r.count } });
      onClose();
      onUnselectItems();
      refresh();
    } catch (e) {
      notifyError(e);
    }
  };

  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth="xs">
      <DialogTitle>{translate('res.channel.batch_tag')}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate('res.channel.batch_tag_hint', { n: selectedIds.length })}
        </Typography>
        <TextField autoFocus fullWidth size="small" label={translate('res.channel.fields.tag')} value={tag} onChange={(e) => setTag(e.target.value)} />
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('res.common.cancel')}</Button>
        <Button variant="contained" onClick={submit}>
          {translate('res.common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
};
