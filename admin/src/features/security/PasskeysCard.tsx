import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { apiQuery } from '../../resources/shared/hooks';
import { useNotify, useTranslate } from 'react-admin';
import {
  Alert,
  Button,
  Card,
  CardContent,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  List,
  ListItem,
  ListItemText,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import FingerprintIcon from '@mui/icons-material/Fingerprint';
import EditIcon from '@mui/icons-material/EditOutlined';
import DeleteIcon from '@mui/icons-material/DeleteOutline';
import { browserSupportsWebAuthn, startRegistration } from '@simplewebauthn/browser';
import { api, errorText } from '../../lib/http';
import { isCancelled, useSecureAction } from './secureAction';

interface Passkey {
  id: number;
  name: string;
  created_at: number;
  last_used_at: number | null;
}
interface PasskeyList {
  enabled: boolean;
  available: boolean;
  items: Passkey[];
}

const when = (sec: number) => new Date(sec * 1000).toLocaleString();

/** Personal settings: the user's passkeys (add with a name, rename, delete). */
export function PasskeysCard() {
  const translate = useTranslate();
  const notify = useNotify();
  const { run, dialog: verifyDialog } = useSecureAction();
  // The name dialog serves both adding (id undefined) and renaming.
  const [naming, setNaming] = useState<{ id?: number; name: string } | null>(null);
  const [removing, setRemoving] = useState<Passkey | null>(null);
  const fail = (err: unknown) => {
    if (!isCancelled(err)) notify(errorText(err, translate), { type: 'error' });
  };
  const supported = typeof window !== 'undefined' && browserSupportsWebAuthn();

  // Nothing shown when it cannot be loaded; saves below load it again.
  const query = useQuery(apiQuery<PasskeyList>('passkeys', '/api/user/passkey'));
  const list = query.isError ? null : (query.data ?? null);
  const { refetch } = query;

  const saveCall = useMutation({
    mutationFn: async (n: { id?: number; name: string }) => {
      if (n.id !== undefined) {
        await api().put(`/api/user/passkey/${n.id}`, { name: n.name });
      } else {
        const begin = await run(() => api().post<{ options: Parameters<typeof startRegistration>[0]['optionsJSON'] }>('/api/user/passkey/register/begin'));
        const credential = await startRegistration({ optionsJSON: begin.data.options });
        await api().post('/api/user/passkey/register/finish', { name: n.name, credential });
        notify('feat.security.passkey.added', { type: 'success' });
      }
    },
    onSuccess: async () => {
      setNaming(null);
      await refetch();
    },
    onError: fail,
  });
  const removeCall = useMutation({
    mutationFn: (p: Passkey) => run(() => api().del(`/api/user/passkey/${p.id}`)),
    onSuccess: async () => {
      notify('feat.security.passkey.deleted', { type: 'success' });
      setRemoving(null);
      await refetch();
    },
    onError: fail,
  });
  const busy = saveCall.isPending || removeCall.isPending;
  const saveName = () => {
    if (naming) saveCall.mutate(naming);
  };
  const remove = () => {
    if (removing) removeCall.mutate(removing);
  };

  return (
    <Card variant="outlined" data-testid="personal-passkeys">
      <CardContent>
        <Typography variant="h6" sx={{ mb: 1 }}>
          {translate('feat.security.passkey.title')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
          {translate('feat.security.passkey.intro')}
        </Typography>
        {list && !list.available ? (
          <Alert severity="info" sx={{ mb: 1 }}>
            {translate('feat.security.passkey.unavailable')}
          </Alert>
        ) : null}
        {!supported ? (
          <Alert severity="info" sx={{ mb: 1 }}>
            {translate('feat.security.passkey.unsupported')}
          </Alert>
        ) : null}
        {list?.items.length ? (
          <List dense disablePadding>
            {list.items.map((p) => (
              <ListItem
                key={p.id}
                disableGutters
                data-testid="personal-passkey"
                secondaryAction={
                  <Stack direction="row">
                    <Tooltip title={translate('feat.security.passkey.rename')}>
                      <IconButton size="small" onClick={() => setNaming({ id: p.id, name: p.name })} data-testid="personal-passkey-rename">
                        <EditIcon fontSize="small" />
                      </IconButton>
                    </Tooltip>
                    <Tooltip title={translate('feat.security.passkey.delete')}>
                      <IconButton size="small" onClick={() => setRemoving(p)} data-testid="personal-passkey-delete">
                        <DeleteIcon fontSize="small" />
                      </IconButton>
                    </Tooltip>
                  </Stack>
                }
              >
                <ListItemText
                  primary={p.name}
                  secondary={`${translate('feat.security.passkey.created', { time: when(p.created_at) })} · ${
                    p.last_used_at
                      ? translate('feat.security.passkey.last_used', { time: when(p.last_used_at) })
                      : translate('feat.security.passkey.never_used')
                  }`}
                />
              </ListItem>
            ))}
          </List>
        ) : (
          <Typography variant="body2" sx={{ mb: 1 }}>
            {translate('feat.security.passkey.empty')}
          </Typography>
        )}
        <Button
          variant="outlined"
          startIcon={<FingerprintIcon />}
          sx={{ mt: 1 }}
          fullWidth
          disabled={!list?.available || !supported}
          onClick={() => setNaming({ name: translate('feat.security.passkey.name_default') })}
          data-testid="personal-passkey-add"
        >
          {translate('feat.security.passkey.add')}
        </Button>
      </CardContent>

      <Dialog open={naming !== null} onClose={() => !busy && setNaming(null)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate(naming?.id !== undefined ? 'feat.security.passkey.rename' : 'feat.security.passkey.add')}</DialogTitle>
        <DialogContent>
          <TextField
            autoFocus
            fullWidth
            size="small"
            sx={{ mt: 1 }}
            label={translate('feat.security.passkey.name')}
            value={naming?.name ?? ''}
            onChange={(e) => naming && setNaming({ ...naming, name: e.target.value })}
            slotProps={{ htmlInput: { maxLength: 64, 'data-testid': 'personal-passkey-name' } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setNaming(null)} disabled={busy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={saveName} disabled={busy || !naming?.name.trim()} data-testid="personal-passkey-save">
            {busy ? <CircularProgress size={18} color="inherit" /> : translate('app.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog open={removing !== null} onClose={() => !busy && setRemoving(null)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.security.passkey.delete')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2">{translate('feat.security.passkey.delete_confirm', { name: removing?.name ?? '' })}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setRemoving(null)} disabled={busy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" color="error" disableElevation onClick={remove} disabled={busy} data-testid="personal-passkey-delete-confirm">
            {translate('app.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>
      {verifyDialog}
    </Card>
  );
}
