import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { useNotify, useTranslate } from 'react-admin';
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField } from '@mui/material';
import VisibilityIcon from '@mui/icons-material/VisibilityOutlined';
import { api, errorText } from '../../lib/http';
import { useCopy } from '../../components/CopyDialog';
import { isCancelled, useSecureAction } from './secureAction';

/** Root's "show key" on the channel form: the full key after a fresh re-verification, never kept in the form. */
export function ChannelKeyButton({ id }: { id: number | string }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { copy, dialog: copyDialog } = useCopy();
  const { run, dialog: verifyDialog } = useSecureAction();
  const [key, setKey] = useState<string | null>(null);
  const showCall = useMutation({
    mutationFn: () => run(() => api().post<{ key: string }>(`/api/channel/${id}/key`)),
    onSuccess: (r) => setKey(String(r.data?.key ?? '')),
    onError: (err) => {
      if (!isCancelled(err)) notify(errorText(err, translate), { type: 'error' });
    },
  });

  return (
    <>
      <Button
        size="small"
        startIcon={<VisibilityIcon />}
        onClick={() => showCall.mutate()}
        disabled={showCall.isPending}
        sx={{ alignSelf: 'flex-start' }}
        data-testid="channel-show-key"
      >
        {translate('feat.security.channel_key.show')}
      </Button>
      <Dialog open={key !== null} onClose={() => setKey(null)} maxWidth="sm" fullWidth>
        <DialogTitle>{translate('feat.security.channel_key.title')}</DialogTitle>
        <DialogContent>
          <TextField
            fullWidth
            multiline
            minRows={2}
            size="small"
            value={key ?? ''}
            sx={{ mt: 1 }}
            slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'channel-key-value', style: { fontFamily: 'monospace' } } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => void copy(key ?? '')}>{translate('feat.security.channel_key.copy')}</Button>
          <Button variant="contained" disableElevation onClick={() => setKey(null)}>
            {translate('app.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>
      {verifyDialog}
      {copyDialog}
    </>
  );
}
