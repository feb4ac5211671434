import { useState } from 'react';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, List as MuiList, ListItemButton, ListItemText, TextField, Typography } from '@mui/material';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import { useTranslate } from 'react-admin';
import { splitComma } from '../shared/format';
import type { ChannelRow } from './useChannelOps';

/** Picks the model a channel test uses, among the channel's models (searchable). */
export const TestModelDialog = ({
  row,
  onClose,
  onPick,
}: {
  row: ChannelRow | null;
  onClose: () => void;
  onPick: (row: ChannelRow, model: string) => void;
}) => {
  const translate = useTranslate();
  const [q, setQ] = useState('');
  const models = row ? splitComma(row.models) : [];
  const shown = models.filter((m) => m.toLowerCase().includes(q.toLowerCase()));
  return (
    <Dialog open={!!row} onClose={onClose} fullWidth maxWidth="sm">
      <DialogTitle>{translate('res.channel.pick_model_title', { name: row?.name ?? '' })}</DialogTitle>
      <DialogContent>
        <TextField fullWidth size="small" placeholder={translate('res.channel.search_model')} value={q} onChange={(e) => setQ(e.target.value)} sx={{ mt: 1 }} />
        <MuiList dense sx={{ maxHeight: 360, overflowY: 'auto' }}>
          {shown.map((m) => (
            <ListItemButton key={m} onClick={() => row && onPick(row, m)}>
              <ListItemText primary={m} secondary={m === row?.test_model ? translate('res.channel.fields.test_model') : undefined} />
              <PlayArrowIcon fontSize="small" color="action" />
            </ListItemButton>
          ))}
          {shown.length === 0 && (
            <Typography color="text.secondary" sx={{ p: 2 }}>
              {translate('res.common.empty')}
            </Typography>
          )}
        </MuiList>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('res.common.cancel')}</Button>
      </DialogActions>
    </Dialog>
  );
};
