import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Link as RouterLink, useSearchParams } from 'react-router-dom';
import { useNotify, useTranslate } from 'react-admin';
import { Alert, Button, CircularProgress, Link, Stack, TextField, Typography } from '@mui/material';
import { AuthCard } from '../components/AuthCard';
import { useCopy } from '../components/CopyDialog';
import { api, errorText } from '../lib/http';

/** Password reset confirm (/user/reset?email=&token=): POST /api/user/reset, shows and copies the new password. */
export function ResetConfirm() {
  const translate = useTranslate();
  const notify = useNotify();
  const [params] = useSearchParams();
  const email = params.get('email') ?? '';
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const { copy, dialog } = useCopy();

  const resetCall = useMutation({
    mutationFn: () => api().post<string>('/api/user/reset', { email, token }),
    onSuccess: async (r) => {
      const pwd = String(r.data ?? '');
      setPassword(pwd);
      if (await copy(pwd)) notify('app.reset.done', { type: 'success', messageArgs: { password: pwd } });
    },
    onError: (err) => notify(errorText(err, translate), { type: 'error' }),
  });
  const busy = resetCall.isPending;

  return (
    <AuthCard title={translate('app.reset.confirm_title')}>
      {dialog}
      {!email || !token ? (
        <Alert severity="error">{translate('app.reset.invalid_link')}</Alert>
      ) : (
        <Stack spacing={2}>
          <TextField label={translate('app.reset.email')} value={email} size="small" slotProps={{ htmlInput: { readOnly: true } }} />
          {password ? (
            <TextField
              label={translate('app.reset.new_password')}
              value={password}
              size="small"
              slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'new-password' } }}
              onFocus={(e) => e.target.select()}
            />
          ) : null}
          <Button
            variant="contained"
            size="large"
            disableElevation
            onClick={() => resetCall.mutate()}
            disabled={busy || !!password}
            data-testid="reset-confirm"
          >
            {busy ? <CircularProgress size={22} color="inherit" /> : translate('app.reset.confirm_submit')}
          </Button>
        </Stack>
      )}
      <Typography variant="body2" sx={{ mt: 2, textAlign: 'center' }}>
        <Link component={RouterLink} to="/login">
          {translate('app.reset.back')}
        </Link>
      </Typography>
    </AuthCard>
  );
}
