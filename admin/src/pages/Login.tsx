import { useState, type FormEvent, type ReactElement } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link as RouterLink, useSearchParams } from 'react-router-dom';
import { useLogin, useNotify, useTranslate } from 'react-admin';
import {
  Alert,
  Box,
  Button,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Divider,
  Link,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import GitHubIcon from '@mui/icons-material/GitHub';
import KeyIcon from '@mui/icons-material/Key';
import ForumIcon from '@mui/icons-material/Forum';
import ChatIcon from '@mui/icons-material/Chat';
import { AuthCard } from '../components/AuthCard';
import { Turnstile } from '../components/Turnstile';
import { useStatus } from '../lib/StatusContext';
import { api, errorText, qs } from '../lib/http';
import { KEYS, setUser, store, type StoredUser } from '../lib/storage';
import { TelegramWidget } from '../components/TelegramWidget';
import { TwoFactorRequired } from '../providers/authProvider';
import { apiQuery, asText } from '../resources/shared/hooks';
import FingerprintIcon from '@mui/icons-material/Fingerprint';
import { browserSupportsWebAuthn, startAuthentication } from '@simplewebauthn/browser';

/** Server-built authorization redirect (state bound to the session), carrying a stored inviter code. */
export function oauthStartUrl(provider: 'github' | 'oidc' | 'linuxdo', aff = store().getItem(KEYS.aff) ?? ''): string {
  return `/api/oauth/${provider}/authorize${qs({ aff })}`;
}

/**
 * The widget navigates the browser to its auth URL; that URL carries a one-time state of this
 * session, asked for first, so a link elsewhere with someone else's widget data logs nobody in.
 */
function TelegramLogin({ bot }: { bot: string }) {
  // One state per showing: dropped from the cache when the widget goes (gcTime 0), never asked
  // again while it is shown (the URL it is in must stay valid).
  const { data: state = '' } = useQuery({ ...apiQuery('oauthState', '/api/oauth/state', asText), gcTime: 0, staleTime: Infinity });
  if (!state) return null;
  return (
    <TelegramWidget
      bot={bot}
      authUrl={`/api/oauth/telegram/login${qs({ state })}`}
      size="medium"
      testId="telegram-login"
      sx={{ display: 'flex', justifyContent: 'center' }}
    />
  );
}

/** Login: username/password, expired notice, third-party buttons per status flags. */
export function Login() {
  const translate = useTranslate();
  const notify = useNotify();
  const login = useLogin();
  const [params] = useSearchParams();
  const { status } = useStatus();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [turnstile, setTurnstile] = useState('');
  const [wechatOpen, setWechatOpen] = useState(false);
  const [wechatCode, setWechatCode] = useState('');
  const [codeOpen, setCodeOpen] = useState(false);
  const [code, setCode] = useState('');
  const expired = params.get('expired') === 'true';
  const passwordLogin = status.password_login_enabled !== false;

  const fail = (err: unknown) => notify(errorText(err, translate), { type: 'error' });

  // A session started outside react-admin's login (second factor, passkey): store the user, full load.
  const loggedIn = (user: StoredUser, to: string) => {
    setUser(user);
    notify('app.login.success', { type: 'success' });
    window.location.assign(to);
  };

  // The password login is react-admin's (the auth provider's login); a second factor opens the code dialog.
  const loginCall = useMutation({
    mutationFn: (creds: { username: string; password: string; turnstile: string }) => login(creds, '/token'),
    onSuccess: () => notify('app.login.success', { type: 'success' }),
    onError: (err) => {
      if (err instanceof TwoFactorRequired) {
        setCode('');
        setCodeOpen(true);
      } else fail(err);
    },
  });
  const codeCall = useMutation({
    mutationFn: (c: string) => api().post<StoredUser>('/api/user/login/2fa', { code: c }),
    onSuccess: (r) => {
      setCodeOpen(false);
      loggedIn(r.data, '/token');
    },
    onError: fail,
  });
  const passkeyCall = useMutation({
    mutationFn: async () => {
      const begin = await api().post<{ options: Parameters<typeof startAuthentication>[0]['optionsJSON'] }>('/api/user/passkey/login/begin');
      const credential = await startAuthentication({ optionsJSON: begin.data.options });
      return api().post<StoredUser>('/api/user/passkey/login/finish', { credential });
    },
    onSuccess: (r) => loggedIn(r.data, '/token'),
    onError: fail,
  });
  const wechatCall = useMutation({
    mutationFn: (c: string) => api().get<StoredUser>(`/api/oauth/wechat${qs({ code: c, aff: store().getItem(KEYS.aff) ?? '' })}`),
    onSuccess: (r) => {
      setUser(r.data);
      notify('app.login.success', { type: 'success' });
      setWechatOpen(false);
      // A chat-app login goes to the home page; a full load refreshes permissions.
      window.location.assign('/');
    },
    onError: fail,
  });
  const busy = loginCall.isPending || codeCall.isPending || passkeyCall.isPending;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!username.trim() || !password) {
      notify('app.login.empty', { type: 'warning' });
      return;
    }
    if (status.turnstile_check && !turnstile) {
      notify('app.register.turnstile', { type: 'info' });
      return;
    }
    loginCall.mutate({ username, password, turnstile });
  };
  const submitCode = () => {
    if (code.trim()) codeCall.mutate(code.trim());
  };
  const passkeyLogin = () => passkeyCall.mutate();
  const passkeyOn = Boolean(status.passkey_login) && typeof window !== 'undefined' && browserSupportsWebAuthn();
  const wechatLogin = () => {
    if (wechatCode.trim()) wechatCall.mutate(wechatCode.trim());
  };

  const thirdParty = [
    status.github_oauth && { key: 'github', icon: <GitHubIcon />, href: oauthStartUrl('github') },
    status.oidc_enabled && { key: 'oidc', icon: <KeyIcon />, href: oauthStartUrl('oidc') },
    status.linuxdo_oauth && { key: 'linuxdo', icon: <ForumIcon />, href: oauthStartUrl('linuxdo') },
  ].filter(Boolean) as Array<{ key: string; icon: ReactElement; href: string }>;
  const hasThirdParty = thirdParty.length > 0 || status.wechat_login || (status.telegram_oauth && status.telegram_bot_name);

  return (
    <AuthCard title={translate('app.login.title')}>
      {expired ? (
        <Alert severity="warning" sx={{ mb: 2 }} data-testid="expired-notice">
          {translate('app.login.expired')}
        </Alert>
      ) : null}
      {passwordLogin ? (
        <Box component="form" onSubmit={submit} noValidate>
          <Stack spacing={2}>
            <TextField
              label={translate('app.login.username')}
              name="username"
              autoComplete="username"
              value={username}
              onChange={(e) => setUsername(e.target.value)}
              autoFocus
              fullWidth
              size="small"
            />
            <TextField
              label={translate('app.login.password')}
              name="password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              fullWidth
              size="small"
            />
            {status.turnstile_check && status.turnstile_site_key ? <Turnstile siteKey={String(status.turnstile_site_key)} onToken={setTurnstile} /> : null}
            <Button type="submit" variant="contained" size="large" disableElevation disabled={busy} data-testid="login-submit">
              {busy ? <CircularProgress size={22} color="inherit" /> : translate('app.login.submit')}
            </Button>
          </Stack>
        </Box>
      ) : (
        <Alert severity="info">{translate('app.login.password_disabled')}</Alert>
      )}
      {passkeyOn ? (
        <Button variant="outlined" fullWidth startIcon={<FingerprintIcon />} sx={{ mt: 2 }} onClick={passkeyLogin} disabled={busy} data-testid="login-passkey">
          {translate('feat.security.login.passkey')}
        </Button>
      ) : null}
      <Stack
        direction="row"
        justifyContent="space-between"
        sx={{ mt: 2, fontSize: 14, flexWrap: 'wrap', rowGap: 1, columnGap: 2, '& > *': { whiteSpace: 'nowrap' } }}
      >
        {!status.self_use_mode_enabled ? (
          <Typography variant="body2">
            {translate('app.login.no_account')}{' '}
            <Link component={RouterLink} to="/register">
              {translate('app.login.register')}
            </Link>
          </Typography>
        ) : (
          <span />
        )}
        <Typography variant="body2">
          {translate('app.login.forgot')}{' '}
          <Link component={RouterLink} to="/reset">
            {translate('app.login.reset')}
          </Link>
        </Typography>
      </Stack>
      {hasThirdParty ? (
        <>
          <Divider sx={{ my: 3 }}>
            <Typography variant="caption" color="text.secondary">
              {translate('app.login.third_party')}
            </Typography>
          </Divider>
          <Stack spacing={1}>
            {thirdParty.map((p) => (
              <Button key={p.key} variant="outlined" startIcon={p.icon} href={p.href} data-testid={`oauth-${p.key}`}>
                {translate(`app.login.${p.key}`)}
              </Button>
            ))}
            {status.wechat_login ? (
              <Button variant="outlined" startIcon={<ChatIcon />} onClick={() => setWechatOpen(true)} data-testid="oauth-wechat">
                {translate('app.login.wechat')}
              </Button>
            ) : null}
            {status.telegram_oauth && status.telegram_bot_name ? <TelegramLogin bot={String(status.telegram_bot_name)} /> : null}
          </Stack>
        </>
      ) : null}
      <Dialog open={codeOpen} onClose={() => !busy && setCodeOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.security.login.code_title')}</DialogTitle>
        <DialogContent>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
            {translate('feat.security.login.code_hint')}
          </Typography>
          <TextField
            autoFocus
            fullWidth
            size="small"
            label={translate('feat.security.login.code')}
            value={code}
            autoComplete="one-time-code"
            onChange={(e) => setCode(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') submitCode();
            }}
            slotProps={{ htmlInput: { 'data-testid': 'login-2fa-code' } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setCodeOpen(false)} disabled={busy}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={submitCode} disabled={busy || !code.trim()} data-testid="login-2fa-submit">
            {busy ? <CircularProgress size={18} color="inherit" /> : translate('app.login.submit')}
          </Button>
        </DialogActions>
      </Dialog>
      <Dialog open={wechatOpen} onClose={() => setWechatOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('app.login.wechat_title')}</DialogTitle>
        <DialogContent>
          {status.wechat_qrcode ? (
            <Box component="img" src={String(status.wechat_qrcode)} alt="" sx={{ display: 'block', mx: 'auto', width: 200, height: 200 }} />
          ) : null}
          <Typography variant="body2" color="text.secondary" sx={{ my: 1 }}>
            {translate('app.login.wechat_tip')}
          </Typography>
          <TextField label={translate('app.login.wechat_code')} value={wechatCode} onChange={(e) => setWechatCode(e.target.value)} fullWidth size="small" />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setWechatOpen(false)}>{translate('app.common.cancel')}</Button>
          <Button variant="contained" onClick={wechatLogin}>
            {translate('app.login.submit')}
          </Button>
        </DialogActions>
      </Dialog>
    </AuthCard>
  );
}
