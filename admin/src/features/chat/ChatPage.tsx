import { useEffect, useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { Title, useNotify, useTranslate } from 'react-admin';
import { Alert, Box, Button, CircularProgress, Typography } from '@mui/material';
import { api, errorText } from '../../lib/http';
import { useStatus } from '../../lib/StatusContext';
import { store } from '../../lib/storage';
import { chat2Link, chatLinkAt, fillLink, firstEnabledKey, isSafeLink, serverAddress, tokenItems, type LinkResult } from './chatLinks';

/** Redirect delay to /token when the user has no enabled token. */
export const NO_TOKEN_REDIRECT_MS = 1500;

type State = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; url: string; name: string };

const LINK_ERRORS: Record<Exclude<LinkResult, { ok: true }>['error'], string> = {
  parse: 'feat.chat.parse_failed',
  none: 'feat.chat.no_links',
  misconfigured: 'feat.chat.misconfigured',
};

/** The configured chats: the locally stored `chats` text, else the status object's. */
function chatsSource(statusChats: unknown): unknown {
  const raw = store().getItem('chats');
  return raw !== null ? raw : statusChats;
}

/** The first enabled token's key, or undefined (errors are thrown). */
async function enabledKey(): Promise<string | undefined> {
  const res = await api().get('/api/token/?p=1&size=100');
  return firstEnabledKey(tokenItems(res.data));
}

function useChatTarget(build: (key: string, address: string) => LinkResult): State {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const { loaded, error, status } = useStatus();
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    if (!loaded && !error) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const fail = (message: string) => {
      notify(message, { type: 'error' });
      setState({ kind: 'error', message: translate(message, { _: message }) });
    };
    // Check the configuration first (no need to read tokens for a broken link).
    const probe = build('', '');
    if (!probe.ok) {
      fail(LINK_ERRORS[probe.error]);
      return;
    }
    enabledKey()
      .then((key) => {
        if (!live) return;
        if (!key) {
          fail('feat.chat.no_token');
          timer = setTimeout(() => navigate('/token'), NO_TOKEN_REDIRECT_MS);
          return;
        }
        const result = build(key, serverAddress(status.server_address, window.location.origin));
        if (!result.ok) return fail(LINK_ERRORS[result.error]);
        if (!isSafeLink(result.url)) return fail(LINK_ERRORS.misconfigured);
        setState({ kind: 'ready', url: result.url, name: result.name });
      })
      .catch((err) => live && fail(errorText(err, translate)));
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the link is resolved once, when the status arrives (or fails); the builder, router and i18n callbacks must not re-run it (and re-read the tokens)
  }, [loaded, error]);
  return state;
}

function Waiting({ state }: { state: State }) {
  const translate = useTranslate();
  if (state.kind === 'error')
    return (
      <Box sx={{ maxWidth: 560, mx: 'auto', mt: 6 }}>
        <Alert severity="error" data-testid="chat-error">
          {state.message}
        </Alert>
      </Box>
    );
  return (
    <Box sx={{ textAlign: 'center', mt: 8, color: 'text.secondary' }}>
      <CircularProgress size={28} />
      <Typography sx={{ mt: 1 }}>{translate('feat.chat.loading')}</Typography>
    </Box>
  );
}

/** /chat/:id? — the configured chat link (with the first enabled token) in a frame. */
export function ChatPage() {
  const translate = useTranslate();
  const { id } = useParams();
  const { status } = useStatus();
  const state = useChatTarget((key, address) => {
    const link = chatLinkAt(chatsSource(status.chats), id);
    return link.ok ? { ...link, url: fillLink(link.url, key, address) } : link;
  });
  return (
    <Box sx={{ height: 'calc(100vh - 64px)', display: 'flex', flexDirection: 'column', mx: { xs: -1, sm: -2 } }} data-testid="chat-page">
      <Title title={state.kind === 'ready' ? state.name : translate('feat.chat.title')} />
      {state.kind === 'ready' ? (
        <Box
          component="iframe"
          src={state.url}
          title={state.name}
          data-testid="chat-frame"
          allow="clipboard-read; clipboard-write; microphone"
          sx={{ border: 0, width: '100%', flex: 1, minHeight: 400 }}
        />
      ) : (
        <Waiting state={state} />
      )}
    </Box>
  );
}

/** /chat2link — builds the chat link with the first enabled token and goes there. */
export function Chat2LinkPage() {
  const translate = useTranslate();
  const { status } = useStatus();
  const state = useChatTarget((key, address) => chat2Link({ chatLink: status.chat_link, chats: chatsSource(status.chats), key, address }));
  useEffect(() => {
    if (state.kind === 'ready') window.location.href = state.url;
  }, [state]);
  return (
    <Box data-testid="chat2link-page">
      <Title title={translate('feat.chat.redirect_title')} />
      {state.kind === 'ready' ? (
        <Box sx={{ textAlign: 'center', mt: 8 }}>
          <Typography>{translate('feat.chat.redirecting')}</Typography>
          <Button href={state.url} sx={{ mt: 1 }}>
            {translate('feat.chat.open')}
          </Button>
        </Box>
      ) : (
        <Waiting state={state} />
      )}
    </Box>
  );
}
