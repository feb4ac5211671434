import { useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Navigate } from 'react-router-dom';
import { useNotify, useTranslate } from 'react-admin';
import { Alert, Box, Button, Card, CardActionArea, CardContent, CircularProgress, Radio, Stack, TextField, Typography } from '@mui/material';
import { AuthCard } from '../components/AuthCard';
import { api } from '../lib/http';
import { setUser, type StoredUser } from '../lib/storage';
import { LOAD_ONCE, useQueryError } from '../resources/shared/hooks';
import { setupError, usageModeFlags, type UsageMode } from '../lib/validation';

interface SetupState {
  status: boolean;
  root_init: boolean;
  database_type: string;
}

/** GET /api/setup; fails with the message to notify (the server's, else app.setup.status_failed). */
async function loadSetup(): Promise<SetupState> {
  const r = await api()
    .raw<SetupState>('GET', '/api/setup')
    .catch(() => {
      throw new Error('app.setup.status_failed');
    });
  if (r.success && r.data) return r.data;
  throw new Error(r.message || 'app.setup.status_failed');
}

/** First-run setup: admin account unless initialised, usage mode, SQLite warning. */
export function Setup() {
  const translate = useTranslate();
  const notify = useNotify();
  const formRef = useRef<HTMLFormElement>(null);
  const [form, setForm] = useState({ username: '', password: '', confirmPassword: '' });
  const [mode, setMode] = useState<UsageMode>('external');
  const [done, setDone] = useState(false);

  // A failed load is notified (the server's message, else a generic one) and leaves the form as is.
  const query = useQuery({ queryKey: ['gateway', 'setup'], queryFn: loadSetup, ...LOAD_ONCE });
  useQueryError(query, (err) => notify(err instanceof Error ? err.message : 'app.setup.status_failed', { type: 'error' }));
  const state = query.data ?? null;

  const setupCall = useMutation({
    mutationFn: (body: Record<string, unknown>) => api().raw('POST', '/api/setup', body),
    onSuccess: (r) => {
      if (!r.success) return notify(r.message || 'app.setup.failed', { type: 'error' });
      setDone(true);
      notify('app.setup.success', { type: 'success' });
      // The server logged the new root in: straight into the console. A root made earlier logs in.
      const root = r.data as StoredUser | null;
      if (root) setUser(root);
      setTimeout(() => window.location.assign(root ? '/token' : '/login'), 1500);
    },
    onError: () => notify('app.setup.network', { type: 'error' }),
  });
  const busy = setupCall.isPending;

  if (state?.status) return <Navigate to="/" replace />;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!formRef.current) {
      notify('app.setup.form_error', { type: 'error' });
      return;
    }
    const problem = setupError(form, !!state?.root_init);
    if (problem) {
      notify(problem, { type: 'error' });
      return;
    }
    setupCall.mutate(state?.root_init ? { ...usageModeFlags(mode) } : { ...form, username: form.username.trim(), ...usageModeFlags(mode) });
  };

  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));
  const modes: UsageMode[] = ['external', 'self', 'demo'];

  return (
    <AuthCard title={translate('app.setup.title')} width={640}>
      {!state ? (
        <Box sx={{ textAlign: 'center', py: 4 }}>
          <CircularProgress />
        </Box>
      ) : (
        <Box component="form" ref={formRef} onSubmit={submit} noValidate data-testid="setup-form">
          <Typography color="text.secondary" sx={{ mb: 2, textAlign: 'center' }}>
            {translate('app.setup.intro')}
          </Typography>
          {!state.root_init ? (
            <Alert severity="info" sx={{ mb: 2 }} data-testid="setup-balance">
              {translate('app.setup.balance')}
            </Alert>
          ) : null}
          {state.database_type === 'sqlite' ? (
            <Alert severity="warning" sx={{ mb: 2 }} data-testid="sqlite-warning">
              {translate('app.setup.sqlite')}
            </Alert>
          ) : null}
          <Typography variant="subtitle1" sx={{ fontWeight: 600, mb: 1 }}>
            {translate('app.setup.admin')}
          </Typography>
          {state.root_init ? (
            <Alert severity="info" sx={{ mb: 2 }}>
              {translate('app.setup.admin_done')}
            </Alert>
          ) : (
            <Stack spacing={2} sx={{ mb: 3 }}>
              <TextField
                label={translate('app.setup.username')}
                name="username"
                value={form.username}
                onChange={set('username')}
                size="small"
                slotProps={{ htmlInput: { maxLength: 12 } }}
                autoFocus
              />
              <TextField
                label={translate('app.setup.password')}
                name="password"
                type="password"
                value={form.password}
                onChange={set('password')}
                size="small"
                autoComplete="new-password"
              />
              <TextField
                label={translate('app.setup.confirm')}
                name="confirmPassword"
                type="password"
                value={form.confirmPassword}
                onChange={set('confirmPassword')}
                size="small"
                autoComplete="new-password"
              />
            </Stack>
          )}
          <Typography variant="subtitle1" sx={{ fontWeight: 600, mb: 1 }}>
            {translate('app.setup.mode')}
          </Typography>
          <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ mb: 3 }}>
            {modes.map((m) => (
              <Card key={m} variant="outlined" sx={{ flex: 1, borderColor: mode === m ? 'primary.main' : undefined, borderWidth: mode === m ? 2 : 1 }}>
                <CardActionArea onClick={() => setMode(m)} sx={{ height: '100%' }} data-testid={`mode-${m}`}>
                  <CardContent sx={{ p: 1.5 }}>
                    <Stack direction="row" alignItems="center">
                      <Radio checked={mode === m} size="small" sx={{ p: 0.5, mr: 0.5 }} />
                      <Typography sx={{ fontWeight: 600 }}>{translate(`app.setup.mode_${m}`)}</Typography>
                    </Stack>
                    <Typography variant="body2" color="text.secondary" sx={{ mt: 0.5 }}>
                      {translate(`app.setup.mode_${m}_desc`)}
                    </Typography>
                  </CardContent>
                </CardActionArea>
              </Card>
            ))}
          </Stack>
          <Button type="submit" variant="contained" size="large" fullWidth disableElevation disabled={busy || done} data-testid="setup-submit">
            {busy ? <CircularProgress size={22} color="inherit" /> : translate('app.setup.submit')}
          </Button>
          <Typography variant="caption" color="text.secondary" sx={{ display: 'block', mt: 1, textAlign: 'center' }}>
            {translate('app.setup.database', { type: state.database_type })}
          </Typography>
        </Box>
      )}
    </AuthCard>
  );
}
