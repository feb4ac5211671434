import { useCallback, useRef, useState, type ReactElement } from 'react';
import { useMutation } from '@tanstack/react-query';
import { HttpError, useNotify, useTranslate } from 'react-admin';
import { Alert, Button, CircularProgress, Dialog, DialogActions, DialogContent, DialogTitle, Stack, Tab, Tabs, TextField, Typography } from '@mui/material';
import FingerprintIcon from '@mui/icons-material/Fingerprint';
import { startAuthentication } from '@simplewebauthn/browser';
import { api, errorText } from '../../lib/http';

export type VerifyMethod = '2fa' | 'passkey' | 'password';

/** Thrown by a secure action when the user closes the verification dialog. */
export class VerificationCancelled extends Error {
  constructor() {
    super('verification cancelled');
  }
}
export const isCancelled = (err: unknown) => err instanceof VerificationCancelled;

/** The methods of a "verification required" refusal (the server's `data`), or null for any other error. */
export function requiredMethods(err: unknown): VerifyMethod[] | null {
  if (!(err instanceof HttpError)) return null;
  const data = (err.body as { data?: { verification_required?: boolean; methods?: unknown } } | undefined)?.data;
  if (!data?.verification_required) return null;
  return Array.isArray(data.methods) ? (data.methods.filter((m) => m === '2fa' || m === 'passkey' || m === 'password') as VerifyMethod[]) : [];
}

/**
 * Runs a sensitive call; when the server answers that it needs a fresh verification, opens the
 * dialog (2FA code, passkey or password, whichever the account has), then runs the call again.
 */
export function useSecureAction(): { run: <T>(fn: () => Promise<T>) => Promise<T>; dialog: ReactElement } {
  const [methods, setMethods] = useState<VerifyMethod[] | null>(null);
  const pending = useRef<{ resolve: () => void; reject: (e: unknown) => void } | null>(null);
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      const m = requiredMethods(err);
      if (!m) throw err;
      await new Promise<void>((resolve, reject) => {
        pending.current = { resolve, reject };
        setMethods(m);
      });
      return fn();
    }
  }, []);
  const close = (ok: boolean) => {
    const p = pending.current;
    pending.current = null;
    setMethods(null);
    if (ok) p?.resolve();
    else p?.reject(new VerificationCancelled());
  };
  const dialog = <VerifyDialog open={methods !== null} methods={methods ?? []} onVerified={() => close(true)} onCancel={() => close(false)} />;
  return { run, dialog };
}

/** The re-verification dialog: one tab per method the account has. */
export function VerifyDialog(props: { open: boolean; methods: VerifyMethod[]; onVerified: () => void; onCancel: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [tab, setTab] = useState<VerifyMethod | ''>('');
  const [value, setValue] = useState('');
  const method: VerifyMethod | undefined = (tab && props.methods.includes(tab) ? tab : props.methods[0]) || undefined;

  const verifyCall = useMutation({
    mutationFn: async ({ m, v }: { m: VerifyMethod; v: string }) => {
      if (m === 'passkey') {
        const begin = await api().post<{ options: Parameters<typeof startAuthentication>[0]['optionsJSON'] }>('/api/user/passkey/verify/begin');
        const credential = await startAuthentication({ optionsJSON: begin.data.options });
        await api().post('/api/user/passkey/verify/finish', { credential });
      } else {
        await api().post('/api/verify', m === '2fa' ? { method: m, code: v.trim() } : { method: m, password: v });
      }
    },
    onSuccess: () => {
      setValue('');
      setTab('');
      notify('feat.security.verify.ok', { type: 'success' });
      props.onVerified();
    },
    onError: (err) => notify(errorText(err, translate), { type: 'error' }),
  });
  const busy = verifyCall.isPending;
  const submit = () => {
    if (!method) return;
    if (method !== 'passkey' && !value.trim()) return notify('feat.security.verify.empty', { type: 'warning' });
    verifyCall.mutate({ m: method, v: value });
  };

  return (
    <Dialog open={props.open} onClose={() => !busy && props.onCancel()} maxWidth="xs" fullWidth data-testid="verify-dialog">
      <DialogTitle>{translate('feat.security.verify.title')}</DialogTitle>
      <DialogContent>
        <Alert severity="info" sx={{ mb: 2 }}>
          {translate('feat.security.verify.hint')}
        </Alert>
        {props.methods.length > 1 ? (
          <Tabs value={method} onChange={(_e, v: VerifyMethod) => setTab(v)} sx={{ mb: 2 }}>
            {props.methods.map((m) => (
              <Tab key={m} value={m} label={translate(`feat.security.verify.method_${m}`)} data-testid={`verify-tab-${m}`} />
            ))}
          </Tabs>
        ) : null}
        {method === 'passkey' ? (
          <Stack spacing={2} alignItems="center">
            <Typography variant="body2" color="text.secondary">
              {translate('feat.security.verify.passkey_hint')}
            </Typography>
            <Button variant="contained" disableElevation startIcon={<FingerprintIcon />} onClick={submit} disabled={busy} data-testid="verify-passkey">
              {translate('feat.security.verify.passkey_button')}
            </Button>
          </Stack>
        ) : (
          <TextField
            autoFocus
            fullWidth
            size="small"
            type={method === 'password' ? 'password' : 'text'}
            autoComplete={method === 'password' ? 'current-password' : 'one-time-code'}
            label={translate(method === 'password' ? 'feat.security.verify.password' : 'feat.security.verify.code')}
            value={value}
            onChange={(e) => setValue(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') submit();
            }}
            slotProps={{ htmlInput: { 'data-testid': 'verify-input' } }}
          />
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onCancel} disabled={busy}>
          {translate('app.common.cancel')}
        </Button>
        {method !== 'passkey' ? (
          <Button variant="contained" disableElevation onClick={submit} disabled={busy} data-testid="verify-submit">
            {busy ? <CircularProgress size={18} color="inherit" /> : translate('feat.security.verify.submit')}
          </Button>
        ) : null}
      </DialogActions>
    </Dialog>
  );
}
