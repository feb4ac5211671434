import { useState, type ReactNode } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useNotify, useTranslate } from 'react-admin';
import {
  Box,
  Button,
  Card,
  CardContent,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Divider,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import EmailIcon from '@mui/icons-material/EmailOutlined';
import GitHubIcon from '@mui/icons-material/GitHub';
import KeyIcon from '@mui/icons-material/VpnKeyOutlined';
import ForumIcon from '@mui/icons-material/ForumOutlined';
import ChatIcon from '@mui/icons-material/ChatOutlined';
import TelegramIcon from '@mui/icons-material/Telegram';
import { api, errorText, qs } from '../../lib/http';
import { useStatus } from '../../lib/StatusContext';
import { useEmailCode } from '../../lib/useEmailCode';
import { Turnstile } from '../../components/Turnstile';
import { authorizeUrl, bindingFlags, emailBindProblem } from './personalSettings';
import type { SelfUser } from './useSelf';
import { TelegramWidget } from '../../components/TelegramWidget';
import { apiQuery, asText } from '../../resources/shared/hooks';

function Row({ icon, label, value, action, testId }: { icon: ReactNode; label: string; value: string; action?: ReactNode; testId: string }) {
  return (
    <Stack direction="row" spacing={1.5} sx={{ alignItems: 'center', py: 1 }} data-testid={testId}>
      <Box sx={{ color: 'text.secondary', display: 'flex' }}>{icon}</Box>
      <Box sx={{ flex: 1, minWidth: 0 }}>
        <Typography variant="body2" sx={{ fontWeight: 500 }}>
          {label}
        </Typography>
        <Typography variant="body2" color="text.secondary" noWrap title={value}>
          {value}
        </Typography>
      </Box>
      {action}
    </Stack>
  );
}

/**
 * The widget navigates the browser to its auth URL, so the bind URL carries a one-time state the
 * server issued to this session first (a bind URL without one is refused: another site could
 * send the browser there with its own Telegram data).
 */
function TelegramBindWidget({ bot }: { bot: string }) {
  // One state per showing: dropped from the cache when the widget goes (gcTime 0), never asked
  // again while it is shown (the URL it is in must stay valid).
  const query = useQuery({ ...apiQuery('telegramBindState', '/api/oauth/telegram/bind_state', asText, 'post'), gcTime: 0, staleTime: Infinity });
  const state = query.data ?? '';
  const failed = query.isError;
  if (failed) return null;
  if (!state) return <CircularProgress size={16} />;
  return <TelegramWidget bot={bot} authUrl={`/api/oauth/telegram/bind${qs({ state })}`} size="small" testId="personal-telegram-widget" />;
}

/** Bindings: email, GitHub, OIDC, LinuxDO, WeChat, Telegram; bound ids are read-only. */
export function BindingsCard({ self, onChanged }: { self: SelfUser | null; onChanged: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const flags = bindingFlags(status);
  const notBound = translate('feat.personal.bind.not_bound');

  const [emailOpen, setEmailOpen] = useState(false);
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [turnstile, setTurnstile] = useState('');
  const emailCode = useEmailCode('feat.personal.bind.code_sent');
  const { sending, left } = emailCode;
  const [wechatOpen, setWechatOpen] = useState(false);
  const [wechatCode, setWechatCode] = useState('');

  const fail = (err: unknown) => notify(errorText(err, translate), { type: 'error' });

  const emailCall = useMutation({
    mutationFn: (b: { email: string; code: string }) => api().get(`/api/oauth/email/bind${qs(b)}`),
    onSuccess: () => {
      notify('feat.personal.bind.email_ok', { type: 'success' });
      setEmailOpen(false);
      setCode('');
      onChanged();
    },
    onError: fail,
  });
  const wechatCall = useMutation({
    mutationFn: (c: string) => api().get(`/api/oauth/wechat/bind${qs({ code: c })}`),
    onSuccess: () => {
      notify('feat.personal.bind.wechat_ok', { type: 'success' });
      setWechatOpen(false);
      setWechatCode('');
      onChanged();
    },
    onError: fail,
  });
  const binding = emailCall.isPending || wechatCall.isPending;

  const sendCode = () => {
    const problem = emailBindProblem(email, '', false);
    if (problem) return notify(problem.key, { type: 'warning' });
    if (status.turnstile_check && !turnstile) return notify('feat.personal.bind.turnstile', { type: 'info' });
    emailCode.send(email, turnstile);
  };

  const bindEmail = () => {
    const problem = emailBindProblem(email, code);
    if (problem) return notify(problem.key, { type: 'warning' });
    emailCall.mutate({ email: email.trim(), code: code.trim() });
  };

  const bindWechat = () => {
    if (wechatCode.trim()) wechatCall.mutate(wechatCode.trim());
  };

  const redirectButton = (provider: 'github' | 'oidc' | 'linuxdo', bound: boolean) => (
    <Button size="small" variant="outlined" disabled={bound} href={bound ? undefined : authorizeUrl(provider)} data-testid={`personal-bind-${provider}`}>
      {translate('feat.personal.bind.bind')}
    </Button>
  );

  const rows: ReactNode[] = [
    <Row
      key="email"
      testId="personal-bind-email-row"
      icon={<EmailIcon />}
      label={translate('feat.personal.bind.email')}
      value={self?.email || notBound}
      action={
        <Button
          size="small"
          variant="outlined"
          onClick={() => {
            setEmail('');
            setCode('');
            setEmailOpen(true);
          }}
          data-testid="personal-bind-email"
        >
          {self?.email ? translate('feat.personal.bind.change') : translate('feat.personal.bind.bind')}
        </Button>
      }
    />,
  ];
  if (flags.github || self?.github_id)
    rows.push(
      <Row
        key="github"
        testId="personal-bind-github-row"
        icon={<GitHubIcon />}
        label={translate('feat.personal.bind.github')}
        value={self?.github_id || notBound}
        action={flags.github ? redirectButton('github', !!self?.github_id) : undefined}
      />,
    );
  if (flags.oidc || self?.oidc_id)
    rows.push(
      <Row
        key="oidc"
        testId="personal-bind-oidc-row"
        icon={<KeyIcon />}
        label={translate('feat.personal.bind.oidc')}
        value={self?.oidc_id || notBound}
        action={flags.oidc ? redirectButton('oidc', !!self?.oidc_id) : undefined}
      />,
    );
  if (flags.linuxdo || self?.linux_do_id)
    rows.push(
      <Row
        key="linuxdo"
        testId="personal-bind-linuxdo-row"
        icon={<ForumIcon />}
        label={translate('feat.personal.bind.linuxdo')}
        value={self?.linux_do_id || notBound}
        action={flags.linuxdo ? redirectButton('linuxdo', !!self?.linux_do_id) : undefined}
      />,
    );
  if (flags.wechat || self?.wechat_id)
    rows.push(
      <Row
        key="wechat"
        testId="personal-bind-wechat-row"
        icon={<ChatIcon />}
        label={translate('feat.personal.bind.wechat')}
        value={self?.wechat_id || notBound}
        action={
          flags.wechat ? (
            <Button size="small" variant="outlined" disabled={!!self?.wechat_id} onClick={() => setWechatOpen(true)} data-testid="personal-bind-wechat">
              {translate('feat.personal.bind.bind')}
            </Button>
          ) : undefined
        }
      />,
    );
  if (flags.telegram || self?.telegram_id)
    rows.push(
      <Row
        key="telegram"
        testId="personal-bind-telegram-row"
        icon={<TelegramIcon />}
        label={translate('feat.personal.bind.telegram')}
        value={self?.telegram_id || notBound}
        action={flags.telegram && !self?.telegram_id ? <TelegramBindWidget bot={String(status.telegram_bot_name)} /> : undefined}
      />,
    );

  return (
    <Card variant="outlined" data-testid="personal-bindings">
      <CardContent>
        <Typography variant="h6" sx={{ mb: 0.5 }}>
          {translate('feat.personal.bind.title')}
        </Typography>
        {rows.map((r, i) => (
          <Box key={i}>
            {i > 0 ? <Divider /> : null}
            {r}
          </Box>
        ))}
      </CardContent>

      <Dialog open={emailOpen} onClose={() => !binding && setEmailOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.personal.bind.email_title')}</DialogTitle>
        <DialogContent>
          <Stack spacing={2} sx={{ mt: 1 }}>
            <Stack direction="row" spacing={1}>
              <TextField
                placeholder={translate('feat.personal.bind.email_placeholder')}
                type="email"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                size="small"
                fullWidth
                slotProps={{ htmlInput: { 'data-testid': 'personal-bind-email-input' } }}
              />
              <Button
                variant="outlined"
                onClick={sendCode}
                disabled={sending || left > 0}
                sx={{ whiteSpace: 'nowrap', flexShrink: 0 }}
                data-testid="personal-bind-send"
              >
                {sending ? (
                  <CircularProgress size={18} />
                ) : left > 0 ? (
                  translate('feat.personal.bind.resend', { n: left })
                ) : (
                  translate('feat.personal.bind.send_code')
                )}
              </Button>
            </Stack>
            <TextField
              placeholder={translate('feat.personal.bind.code_placeholder')}
              value={code}
              onChange={(e) => setCode(e.target.value)}
              size="small"
              fullWidth
              slotProps={{ htmlInput: { 'data-testid': 'personal-bind-code-input' } }}
            />
            {status.turnstile_check && status.turnstile_site_key ? <Turnstile siteKey={String(status.turnstile_site_key)} onToken={setTurnstile} /> : null}
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setEmailOpen(false)} disabled={binding}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={bindEmail} disabled={binding} data-testid="personal-bind-email-confirm">
            {binding ? <CircularProgress size={18} color="inherit" /> : translate('feat.personal.bind.bind')}
          </Button>
        </DialogActions>
      </Dialog>

      <Dialog open={wechatOpen} onClose={() => !binding && setWechatOpen(false)} maxWidth="xs" fullWidth>
        <DialogTitle>{translate('feat.personal.bind.wechat_title')}</DialogTitle>
        <DialogContent>
          {status.wechat_qrcode ? (
            <Box component="img" src={String(status.wechat_qrcode)} alt="" sx={{ display: 'block', mx: 'auto', width: 200, height: 200 }} />
          ) : null}
          <Typography variant="body2" color="text.secondary" sx={{ my: 1.5, textAlign: 'center' }}>
            {translate('feat.personal.bind.wechat_tip')}
          </Typography>
          <TextField
            placeholder={translate('feat.personal.bind.wechat_code')}
            value={wechatCode}
            onChange={(e) => setWechatCode(e.target.value)}
            size="small"
            fullWidth
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setWechatOpen(false)} disabled={binding}>
            {translate('app.common.cancel')}
          </Button>
          <Button variant="contained" disableElevation onClick={bindWechat} disabled={binding || !wechatCode.trim()}>
            {translate('feat.personal.bind.bind')}
          </Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}
