import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Confirm, useNotify, useRefresh, useTranslate } from 'react-admin';
import { Button, Chip, Stack } from '@mui/material';
import { api, errorText } from '../../lib/http';

interface Row {
  id: number | string;
  username?: string;
  role?: number;
  two_fa_enabled?: boolean;
  passkey_count?: number;
}

/** The user list's 2FA column: whether the user has 2FA / passkeys, and the resets an admin above them may do. */
export function SecondFactorCell({ row, myRole }: { row: Row; myRole: number }) {
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const [ask, setAsk] = useState<'2fa' | 'passkey' | null>(null);
  const below = Number(row.role ?? 0) < myRole;
  const passkeys = Number(row.passkey_count ?? 0);

  const resetCall = useMutation({
    mutationFn: (what: '2fa' | 'passkey') => api().del(what === '2fa' ? `/api/user/${row.id}/2fa` : `/api/user/${row.id}/reset_passkey`),
    onSuccess: (_, what) => {
      notify(what === '2fa' ? 'feat.security.admin.reset_2fa_ok' : 'feat.security.admin.reset_passkey_ok', { type: 'success' });
      refresh();
    },
    onError: (err) => notify(errorText(err, translate), { type: 'error' }),
  });

  return (
    <Stack direction="row" spacing={0.5} alignItems="center" data-testid={`user-2fa-${row.id}`}>
      <Chip
        size="small"
        variant="outlined"
        color={row.two_fa_enabled ? 'success' : 'default'}
        label={translate(row.two_fa_enabled ? 'feat.security.admin.on' : 'feat.security.admin.off')}
      />
      {passkeys ? <Chip size="small" variant="outlined" label={translate('feat.security.admin.passkeys', { n: passkeys })} /> : null}
      {below && row.two_fa_enabled ? (
        <Button size="small" color="warning" onClick={() => setAsk('2fa')} disabled={resetCall.isPending} data-testid={`user-reset-2fa-${row.id}`}>
          {translate('feat.security.admin.reset_2fa')}
        </Button>
      ) : null}
      {below && passkeys ? (
        <Button size="small" color="warning" onClick={() => setAsk('passkey')} disabled={resetCall.isPending}>
          {translate('feat.security.admin.reset_passkey')}
        </Button>
      ) : null}
      <Confirm
        isOpen={ask !== null}
        title="res.common.confirm_title"
        content={ask === 'passkey' ? 'feat.security.admin.reset_passkey_confirm' : 'feat.security.admin.reset_2fa_confirm'}
        translateOptions={{ name: row.username ?? '' }}
        onClose={() => setAsk(null)}
        onConfirm={() => {
          const what = ask;
          setAsk(null);
          if (what) resetCall.mutate(what);
        }}
      />
    </Stack>
  );
}
