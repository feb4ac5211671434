import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { useNavigate } from 'react-router-dom';
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
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import KeyIcon from '@mui/icons-material/VpnKeyOutlined';
import LockIcon from '@mui/icons-material/LockOutlined';
import DeleteIcon from '@mui/icons-material/DeleteForeverOutlined';
import LogoutIcon from '@mui/icons-material/Logout';
import { api, errorText } from '../../lib/http';
import { clearUser } from '../../lib/storage';
import { useCopy } from '../../components/CopyDialog';
import { deleteProblem, passwordProblem } from './personalSettings';
import type { SelfUser } from './useSelf';
import { isCancelled, useSecureAction } from '../security/secureAction';

/** System access token, change password, log out everywhere, delete account. */
export function SecurityCard({ self }: { self: SelfUser | null }) {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const { copy, dialog } = useCopy();
  // The token and the deletion need a fresh re-verification: the dialog opens when the server asks.
  const { run, dialog: verifyDialog } = useSecureAction();
  const fail = (err: unknown) => {
    if (!isCancelled(err)) notify(errorText(err, translate), { type: 'error' });
  };

  const [token, setToken] = useState('');
  const [pwOpen, setPwOpen] = useState(false);
  const [pw, setPw] = useState({ original: '', password: '', confirm: '' });
  const [delOpen, setDelOpen] = useState(false);
  const [delText, setDelText] = useState('');
  const [allOpen, setAllOpen] = useState(false);

  /** Leaves for the login page once this browser's session is gone. */
  const signedOut = () => {
    clearUser();
    navigate('/login');
  };

  // Ends every session of this user on the server (this browser's too): back to the login page.
  const allCall = useMutation({
    mutationFn: () => api().post('/api/user/logout_all'),
    onSuccess: () => {
      notify('feat.personal.logout_all.ok', { type: 'success' });
      setAllOpen(false);
      signedOut();
    },
    onError: fail,
  });
  const tokenCall = useMutation({
    mutationFn: () => run(() => api().get<string>('/api/user/token')),
    onSuccess: async (r) => {
      const t = String(r.data ?? '');
      setToken(t);
      // The manual-copy dialog opens when the clipboard refuses; the token also stays visible below.
      if (await copy(t)) notify('feat.personal.security.token_ok', { type: 'success' });
    },
    onError: fail,
  });
  const pwCall = useMutation({
    mutationFn: (p: typeof pw) => api().put('/api/user/self', { original_password: p.original, password: p.password, password2: p.confirm }),
    onSuccess: () => {
      notify('feat.personal.password.ok', { type: 'success' });
      setPwOpen(false);
      setPw({ original: '', password: '', confirm: '' });
    },
    onError: fail,
  });
  const delCall = useMutation({
    mutationFn: () => run(() => api().del('/api/user/self')),
    onSuccess: () => {
      notify('feat.personal.delete.ok', { type: 'success' });
      setDelOpen(false);
      signedOut();
    },
    onError: fail,
  });
  const tokenBusy = tokenCall.isPending;
  const pwBusy = pwCall.isPending;
  const delBusy = delCall.isPending;
  const allBusy = allCall.isPending;

  const changePassword = () => {
    // Accounts created through a third party have no password: the server decides whether the original is needed.
    const problem = passwordProblem(pw, false);
    if (problem) return notify(problem.key, { type: 'warning' });
    pwCall.mutate(pw);
  };

  const deleteAccount = () => {
    const problem = deleteProblem(delText, String(self?.username ?? ''));
    if (problem) return notify(problem.key, { type: 'error' });
    delCall.mutate();
  };

  return (
    <Card variant="outlined" data-testid="personal-security">
      <CardContent>
        <Typography variant="h6" sx={{ mb: 1.5 }}>
          {translate('feat.personal.security.title')}
        </Typography>
        <Stack spacing={1.25}>
          <Button
            variant="contained"
            disableElevation
            startIcon={tokenBusy ? <CircularProgress size={16} color="inherit" /> : <KeyIcon />}
            onClick={() => tokenCall.mutate()}
            disabled={tokenBusy}
            data-testid="personal-token"
          >
            {translate('feat.personal.security.token')}
          </Button>
          <Typography variant="caption" color="text.secondary">
            {translate('feat.personal.security.token_hint')}
          </Typography>
          {token ? (
            <TextField
              label={translate('feat.personal.security.token_label')}
              value={token}
              size="small"
              fullWidth
              onFocus={(e) => e.target.select()}
              slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'personal-token-value', style: { fontFamily: 'monospace' } } }}
            />
          ) : null}
          <Button variant="outlined" startIcon={<LockIcon />} onClick={() => setPwOpen(true)} data-testid="personal-password">
            {translate('feat.personal.security.password')}
          </Button>
          <Button variant="outlined" startIcon={<LogoutIcon />} onClick={() => setAllOpen(true)} data-testid="personal-logout-all">
            {translate('feat.personal.security.logout_all')}
          </Button>
          <Button
            variant="outlined"
            color="error"
            startIcon={<DeleteIcon />}
            onClick={() => {
              setDelText('');
              setDelOpen(true);
            }}
            data-testid="personal-delete"
          >
            {translate('feat.personal.security.delete')}
          </Button>
        </Stack>
      </CardContent>

      <Dialog open={pwOpen} onClose={() => !pwBusy && setPwOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.personal.password.title')}</DialogTitle>
        <DialogContent>
          <Stack spacing={2} sx={{ mt: 1 }}>
            <TextField
              label={translate('feat.personal.password.original')}
              type="password"
              autoComplete="current-password"
              value={pw.original}
              onChange={(e) => setPw({ ...pw, original: e.target.value })}
              size="small"
              fullWidth
              slotProps={{ htmlInput: { 'data-testid': 'personal-pw-original' } }}
            />
            <TextField
              label={translate('feat.personal.password.new')}
              placeholder={translate('feat.personal.password.placeholder')}
              type="password"
              autoComplete="new-password"
              value={pw.password}
              onChange={(e) => setPw({ ...pw, password: e.target.value })}
              size="small"
              fullWidth
              slotProps={{ htmlInput: { 'data-testid': 'personal-pw-new', maxLength: 20 } }}
            />
            <TextField
              label={translate('feat.personal.password.confirm')}
              type="password"
              autoComplete="new-password"
              value={pw.confirm}
              onChange={(e) => setPw({ ...pw, confirm: e.target.value })}
              size="small"
              fullWidth
              slotProps={{ htmlInput: { 'data-testid': 'personal-pw-confirm', maxLength: 20 } }}
            />
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setPwOpen(false)} disabled={pwBusy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={changePassword} disabled={pwBusy} data-testid="personal-pw-submit">
            {pwBusy ? <CircularProgress size={18} color="inherit" /> : translate('app.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog open={allOpen} onClose={() => !allBusy && setAllOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.personal.logout_all.title')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2">{translate('feat.personal.logout_all.body')}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setAllOpen(false)} disabled={allBusy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={() => allCall.mutate()} disabled={allBusy} data-testid="personal-logout-all-confirm">
            {allBusy ? <CircularProgress size={18} color="inherit" /> : translate('app.common.confirm')}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog open={delOpen} onClose={() => !delBusy && setDelOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.personal.delete.title')}</DialogTitle>
        <DialogContent>
          <Alert severity="error" sx={{ mb: 2 }}>
            {translate('feat.personal.delete.warning')}
          </Alert>
          <Typography variant="body2" sx={{ mb: 1 }}>
            {translate('feat.personal.delete.prompt', { username: self?.username ?? '' })}
          </Typography>
          <TextField
            placeholder={translate('feat.personal.delete.placeholder')}
            value={delText}
            onChange={(e) => setDelText(e.target.value)}
            size="small"
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'personal-delete-input' } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setDelOpen(false)} disabled={delBusy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" color="error" disableElevation onClick={deleteAccount} disabled={delBusy} data-testid="personal-delete-confirm">
            {delBusy ? <CircularProgress size={18} color="inherit" /> : translate('feat.personal.delete.confirm')}
          </Button>
        </DialogActions>
      </Dialog>
      {dialog}
      {verifyDialog}
    </Card>
  );
}
