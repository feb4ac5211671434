import { useEffect, useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router-dom';
import { useNotify, useTranslate } from 'react-admin';
import { Alert, Box, Button, CircularProgress, Link, Stack, TextField, Typography } from '@mui/material';
import { AuthCard } from '../components/AuthCard';
import { Turnstile } from '../components/Turnstile';
import { useStatus } from '../lib/StatusContext';
import { api, errorText } from '../lib/http';
import { KEYS, store } from '../lib/storage';
import { useEmailCode } from '../lib/useEmailCode';
import { registerError } from '../lib/validation';

/** Registration: aff from ?aff= kept locally, email code with a 30 s resend countdown, bot-check. */
export function Register() {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { status } = useStatus();
  const [form, setForm] = useState({ username: '', password: '', password2: '', email: '', verification_code: '' });
  const [turnstile, setTurnstile] = useState('');
  const emailCode = useEmailCode('app.register.code_sent');
  const { sending, left } = emailCode;

  useEffect(() => {
    const aff = params.get('aff');
    if (aff) store().setItem(KEYS.aff, aff);
  }, [params]);

  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));
  const disabled = status.register_enabled === false || status.password_register_enabled === false;

  const sendCode = () => {
    if (!form.email.trim()) return;
    if (status.turnstile_check && !turnstile) {
      notify('app.register.turnstile', { type: 'info' });
      return;
    }
    emailCode.send(form.email, turnstile);
  };

  const registerCall = useMutation({
    mutationFn: (body: Record<string, unknown>) => api().post(`/api/user/register?turnstile=${encodeURIComponent(turnstile)}`, body),
    onSuccess: () => {
      notify('app.register.success', { type: 'success' });
      navigate('/login');
    },
    onError: (err) => notify(errorText(err, translate), { type: 'error' }),
  });
  const busy = registerCall.isPending;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const problem = registerError(form, { required: !!status.turnstile_check, token: turnstile });
    if (problem) {
      notify(problem, { type: problem === 'app.register.turnstile' ? 'info' : 'warning' });
      return;
    }
    registerCall.mutate({
      username: form.username.trim(),
      password: form.password,
      password2: form.password2,
      email: status.email_verification ? form.email.trim() : form.email.trim() || undefined,
      verification_code: status.email_verification ? form.verification_code.trim() : undefined,
      aff_code: store().getItem(KEYS.aff) ?? '',
    });
  };

  return (
    <AuthCard title={translate('app.register.title')}>
      {disabled ? (
        <Alert severity="info" sx={{ mb: 2 }}>
          {translate('app.register.disabled')}
        </Alert>
      ) : (
        <Box component="form" onSubmit={submit} noValidate>
          <Stack spacing={2}>
            <TextField
              label={translate('app.register.username')}
              name="username"
              value={form.username}
              onChange={set('username')}
              helperText={translate('app.register.username_hint')}
              slotProps={{ htmlInput: { maxLength: 12 } }}
              size="small"
              autoFocus
            />
            <TextField
              label={translate('app.register.password')}
              name="password"
              type="password"
              value={form.password}
              onChange={set('password')}
              helperText={translate('app.register.password_hint')}
              slotProps={{ htmlInput: { maxLength: 20 } }}
              size="small"
              autoComplete="new-password"
            />
            <TextField
              label={translate('app.register.password2')}
              name="password2"
              type="password"
              value={form.password2}
              onChange={set('password2')}
              size="small"
              autoComplete="new-password"
            />
            {status.email_verification ? (
              <>
                <Stack direction="row" spacing={1}>
                  <TextField
                    label={translate('app.register.email')}
                    name="email"
                    type="email"
                    value={form.email}
                    onChange={set('email')}
                    size="small"
                    fullWidth
                  />
                  <Button
                    variant="outlined"
                    onClick={sendCode}
                    disabled={sending || left > 0}
                    sx={{ whiteSpace: 'nowrap', minWidth: 110 }}
                    data-testid="send-code"
                  >
                    {left > 0 ? translate('app.register.resend', { n: left }) : translate('app.register.send_code')}
                  </Button>
                </Stack>
                <TextField
                  label={translate('app.register.code')}
                  name="verification_code"
                  value={form.verification_code}
                  onChange={set('verification_code')}
                  size="small"
                />
              </>
            ) : null}
            {status.turnstile_check && status.turnstile_site_key ? <Turnstile siteKey={String(status.turnstile_site_key)} onToken={setTurnstile} /> : null}
            <Button type="submit" variant="contained" size="large" disableElevation disabled={busy} data-testid="register-submit">
              {busy ? <CircularProgress size={22} color="inherit" /> : translate('app.register.submit')}
            </Button>
          </Stack>
        </Box>
      )}
      <Typography variant="body2" sx={{ mt: 2, textAlign: 'center' }}>
        {translate('app.register.have_account')}{' '}
        <Link component={RouterLink} to="/login">
          {translate('app.register.login')}
        </Link>
      </Typography>
    </AuthCard>
  );
}
