import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { apiQuery } from '../../resources/shared/hooks';
import { useNotify, useTranslate } from 'react-admin';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Chip,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import ShieldIcon from '@mui/icons-material/ShieldOutlined';
import { api, errorText } from '../../lib/http';
import { useCopy } from '../../components/CopyDialog';
import { isCancelled, useSecureAction } from './secureAction';

interface Status {
  enabled: boolean;
  pending: boolean;
  backup_codes_remaining: number;
  required: boolean;
}
interface Setup {
  secret: string;
  qr_code_data: string;
  qr_code: string;
}

/** Personal settings: TOTP two-factor authentication (enrol with QR + key, backup codes, turn off). */
export function TwoFactorCard() {
  const translate = useTranslate();
  const notify = useNotify();
  const { copy, dialog: copyDialog } = useCopy();
  const { run, dialog: verifyDialog } = useSecureAction();
  const [setup, setSetup] = useState<Setup | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [ask, setAsk] = useState<'disable' | 'regenerate' | null>(null);
  const fail = (err: unknown) => {
    if (!isCancelled(err)) notify(errorText(err, translate), { type: 'error' });
  };

  // Nothing shown when it cannot be loaded; saves below load it again.
  const query = useQuery(apiQuery<Status>('twoFactorStatus', '/api/user/2fa/status'));
  const status = query.isError ? null : (query.data ?? null);
  const { refetch } = query;

  // Enrolment starts after a re-verification (cancelling it says nothing).
  const startCall = useMutation({
    mutationFn: () => run(() => api().post<Setup>('/api/user/2fa/setup')),
    onSuccess: (r) => {
      setCode('');
      setSetup(r.data);
    },
    onError: fail,
  });
  const confirmCall = useMutation({
    mutationFn: (c: string) => api().post<{ backup_codes: string[] }>('/api/user/2fa/enable', { code: c }),
    onSuccess: async (r) => {
      notify('feat.security.twofa.enabled_ok', { type: 'success' });
      setSetup(null);
      setCodes(r.data.backup_codes);
      await refetch();
    },
    onError: fail,
  });
  const askCall = useMutation({
    mutationFn: async ({ what, c }: { what: 'disable' | 'regenerate'; c: string }) => {
      if (what === 'disable') {
        await api().post('/api/user/2fa/disable', { code: c });
        notify('feat.security.twofa.disabled_ok', { type: 'success' });
      } else {
        const r = await api().post<{ backup_codes: string[] }>('/api/user/2fa/backup_codes', { code: c });
        setCodes(r.data.backup_codes);
      }
    },
    onSuccess: async () => {
      setAsk(null);
      await refetch();
    },
    onError: fail,
  });
  const busy = startCall.isPending || confirmCall.isPending || askCall.isPending;

  const start = () => startCall.mutate();
  const confirm = () => {
    if (code.trim()) confirmCall.mutate(code.trim());
  };
  const submitAsk = () => {
    if (code.trim() && ask) askCall.mutate({ what: ask, c: code.trim() });
  };

  const codeField = (label: string, testId: string) => (
    <TextField
      autoFocus
      fullWidth
      size="small"
      label={label}
      value={code}
      autoComplete="one-time-code"
      onChange={(e) => setCode(e.target.value)}
      slotProps={{ htmlInput: { 'data-testid': testId, inputMode: 'text' } }}
    />
  );

  return (
    <Card variant="outlined" data-testid="personal-2fa">
      <CardContent>
        <Stack direction="row" alignItems="center" spacing={1} sx={{ mb: 1.5 }}>
          <Typography variant="h6">{translate('feat.security.twofa.title')}</Typography>
          {status ? (
            <Chip
              size="small"
              color={status.enabled ? 'success' : 'default'}
              label={translate(status.enabled ? 'feat.security.twofa.on' : 'feat.security.twofa.off')}
              data-testid="personal-2fa-state"
            />
          ) : null}
        </Stack>
        {status?.required && !status.enabled ? (
          <Alert severity="warning" sx={{ mb: 1.5 }}>
            {translate('feat.security.twofa.required')}
          </Alert>
        ) : null}
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }}>
          {translate('feat.security.twofa.intro')}
        </Typography>
        {status?.enabled ? (
          <Stack spacing={1.25}>
            <Typography variant="body2" data-testid="personal-2fa-remaining">
              {translate('feat.security.twofa.remaining', { n: status.backup_codes_remaining })}
            </Typography>
            <Button
              variant="outlined"
              onClick={() => {
                setCode('');
                setAsk('regenerate');
              }}
              data-testid="personal-2fa-regenerate"
            >
              {translate('feat.security.twofa.regenerate')}
            </Button>
            <Button
              variant="outlined"
              color="error"
              onClick={() => {
                setCode('');
                setAsk('disable');
              }}
              data-testid="personal-2fa-disable"
            >
              {translate('feat.security.twofa.disable')}
            </Button>
          </Stack>
        ) : (
          <Button
            variant="contained"
            disableElevation
            startIcon={busy ? <CircularProgress size={16} color="inherit" /> : <ShieldIcon />}
            onClick={start}
            disabled={busy || !status}
            data-testid="personal-2fa-enable"
          >
            {translate('feat.security.twofa.enable')}
          </Button>
        )}
      </CardContent>

      <Dialog open={setup !== null} onClose={() => !busy && setSetup(null)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.security.twofa.setup_title')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" sx={{ mb: 1 }}>
            {translate('feat.security.twofa.scan')}
          </Typography>
          {setup ? (
            <Box component="img" src={setup.qr_code} alt="QR" sx={{ display: 'block', mx: 'auto', width: 200, height: 200 }} data-testid="personal-2fa-qr" />
          ) : null}
          <TextField
            label={translate('feat.security.twofa.secret')}
            value={setup?.secret ?? ''}
            size="small"
            fullWidth
            sx={{ my: 2 }}
            onFocus={(e) => e.target.select()}
            slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'personal-2fa-secret', style: { fontFamily: 'monospace' } } }}
          />
          {codeField(translate('feat.security.twofa.code'), 'personal-2fa-code')}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setSetup(null)} disabled={busy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={confirm} disabled={busy || !code.trim()} data-testid="personal-2fa-confirm">
            {busy ? <CircularProgress size={18} color="inherit" /> : translate('feat.security.twofa.confirm')}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog open={ask !== null} onClose={() => !busy && setAsk(null)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate(ask === 'disable' ? 'feat.security.twofa.disable_title' : 'feat.security.twofa.regenerate_title')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" sx={{ mb: 2 }}>
            {translate(ask === 'disable' ? 'feat.security.twofa.disable_hint' : 'feat.security.twofa.regenerate_hint')}
          </Typography>
          {codeField(translate('feat.security.twofa.disable_code'), 'personal-2fa-ask-code')}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setAsk(null)} disabled={busy}>
            {translate('app.common.cancel')}
          </Button>
          <Button
            variant="contained"
            color={ask === 'disable' ? 'error' : 'primary'}
            disableElevation
            onClick={submitAsk}
            disabled={busy || !code.trim()}
            data-testid="personal-2fa-ask-confirm"
          >
            {busy ? <CircularProgress size={18} color="inherit" /> : translate('app.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog open={codes !== null} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.security.twofa.backup_title')}</DialogTitle>
        <DialogContent>
          <Alert severity="warning" sx={{ mb: 2 }}>
            {translate('feat.security.twofa.backup_hint')}
          </Alert>
          <Box
            component="pre"
            data-testid="personal-2fa-backup"
            sx={{ fontFamily: 'monospace', fontSize: 15, columns: 2, m: 0, p: 1.5, bgcolor: 'action.hover', borderRadius: 1 }}
          >
            {(codes ?? []).join('\n')}
          </Box>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => void copy((codes ?? []).join('\n'))}>{translate('feat.security.twofa.backup_copy')}</Button>
          <Button variant="contained" disableElevation onClick={() => setCodes(null)} data-testid="personal-2fa-backup-done">
            {translate('feat.security.twofa.done')}
          </Button>
        </DialogActions>
      </Dialog>
      {verifyDialog}
      {copyDialog}
    </Card>
  );
}
