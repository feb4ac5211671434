import { useEffect, useRef } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router-dom';
import { useNotify, useTranslate } from 'react-admin';
import { useMutation } from '@tanstack/react-query';
import { Box, CircularProgress, Typography } from '@mui/material';
import { api, errorText, qs } from '../lib/http';
import { setUser, type StoredUser } from '../lib/storage';

// telegram: the server turns the widget's navigation into /oauth/telegram?code&state (see docs/console.md).
export const OAUTH_TYPES = ['github', 'oidc', 'linuxdo', 'telegram'] as const;

export type CallbackOutcome = { kind: 'bind' } | { kind: 'login'; user: StoredUser } | { kind: 'failed'; message: string };

/**
 * Where a login through `type` lands: the code-hosting, OIDC and forum callbacks open the token
 * page; Telegram, a widget on the login page like the chat-app login, lands on the home page as
 * that one does.
 */
export function loginLanding(type: string): string {
  return type === 'telegram' ? '/' : '/token';
}

/** OAuth return: 'bind' → /setting; other success → store user, /token; failure → message, then /setting. */
export function callbackOutcome(answer: { success: boolean; message?: string; data?: unknown }): CallbackOutcome {
  if (!answer.success) return { kind: 'failed', message: answer.message || 'Error' };
  if (answer.message === 'bind') return { kind: 'bind' };
  const user = answer.data as StoredUser | null;
  if (!user || typeof user !== 'object' || user.id == null) return { kind: 'failed', message: answer.message || 'Error' };
  return { kind: 'login', user };
}

export function OAuthCallback() {
  const { type = '' } = useParams();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const notify = useNotify();
  const translate = useTranslate();
  const fail = (message: string) => {
    notify(message, { type: 'error' });
    setTimeout(() => notify('app.oauth.failed_redirect', { type: 'info' }), 300);
    setTimeout(() => navigate('/setting'), 1500);
  };
  // The provider's code is single-use: the exchange is a mutation, fired once on arrival below
  // (not a query, which a remount or a refresh could ask again).
  const exchange = useMutation({
    mutationFn: () => api().raw('GET', `/api/oauth/${type}${qs({ code: params.get('code') ?? '', state: params.get('state') ?? '' })}`),
    onSuccess: (answer) => {
      const out = callbackOutcome(answer);
      if (out.kind === 'bind') {
        notify('app.oauth.bind_success', { type: 'success' });
        navigate('/setting');
      } else if (out.kind === 'login') {
        setUser(out.user);
        notify('app.oauth.success', { type: 'success' });
        // A full load so react-admin re-reads the permissions of the new session.
        window.location.assign(loginLanding(type));
      } else fail(out.message);
    },
    onError: (err) => fail(errorText(err, translate)),
  });
  const once = useRef(false);
  const { mutate } = exchange;
  useEffect(() => {
    if (once.current) return;
    once.current = true;
    if (!(OAUTH_TYPES as readonly string[]).includes(type)) {
      navigate('/404', { replace: true });
      return;
    }
    mutate();
  }, [type, navigate, mutate]);

  return (
    <Box sx={{ textAlign: 'center', py: 10 }}>
      <CircularProgress />
      <Typography sx={{ mt: 2 }} color="text.secondary">
        {translate('app.oauth.processing')}
      </Typography>
    </Box>
  );
}
