import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Link as RouterLink } from 'react-router-dom';
import { useNotify, useTranslate } from 'react-admin';
import { Box, Button, CircularProgress, Link, Stack, TextField, Typography } from '@mui/material';
import { AuthCard } from '../components/AuthCard';
import { Turnstile } from '../components/Turnstile';
import { useStatus } from '../lib/StatusContext';
import { api, errorText } from '../lib/http';
import { useCountdown } from '../lib/useCountdown';

/** Password reset request: email, optional bot-check, 30 s retry cooldown. */
export function ResetRequest() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [email, setEmail] = useState('');
  const [turnstile, setTurnstile] = useState('');
  const [left, startCountdown] = useCountdown();

  const resetCall = useMutation({
    mutationFn: (b: { email: string; turnstile: string }) =>
      api().get(`/api/reset_password?email=${encodeURIComponent(b.email)}&turnstile=${encodeURIComponent(b.turnstile)}`),
    onSuccess: () => {
      notify('app.reset.sent', { type: 'success' });
      setEmail('');
      startCountdown(30);
    },
    onError: (err) => notify(errorText(err, translate), { type: 'error' }),
  });
  const busy = resetCall.isPending;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!email.trim()) {
      notify('app.reset.empty', { type: 'warning' });
      return;
    }
    if (status.turnstile_check && !turnstile) {
      notify('app.reset.turnstile', { type: 'info' });
      return;
    }
    resetCall.mutate({ email: email.trim(), turnstile });
  };

  return (
    <AuthCard title={translate('app.reset.title')}>
      <Box component="form" onSubmit={submit} noValidate>
        <Stack spacing={2}>
          <TextField
            label={translate('app.reset.email')}
            name="email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            size="small"
            autoFocus
          />
          {status.turnstile_check && status.turnstile_site_key ? <Turnstile siteKey={String(status.turnstile_site_key)} onToken={setTurnstile} /> : null}
          <Button type="submit" variant="contained" size="large" disableElevation disabled={busy || left > 0} data-testid="reset-submit">
            {busy ? <CircularProgress size={22} color="inherit" /> : left > 0 ? translate('app.reset.retry', { n: left }) : translate('app.reset.submit')}
          </Button>
        </Stack>
      </Box>
      <Typography variant="body2" sx={{ mt: 2, textAlign: 'center' }}>
        <Link component={RouterLink} to="/login">
          {translate('app.reset.back')}
        </Link>
      </Typography>
    </AuthCard>
  );
}
