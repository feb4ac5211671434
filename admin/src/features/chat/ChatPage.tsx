import { useEffect, useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useNavigate, useParams } from 'react-router-dom';
import { Title, useNotify, useTranslate } from 'react-admin';
import { Alert, Box, Button, CircularProgress, Typography } from '@mui/material';
import { errorText } from '../../lib/http';
import { useGateway } from '../../resources/shared/api';
import { fetchTokenKey } from '../../resources/tokens/tokenKey';
import type { GatewayDataProvider } from '../../providers/dataProvider';
import { useStatus } from '../../lib/StatusContext';
import { store } from '../../lib/storage';
import { LOAD_ONCE } from '../../resources/shared/hooks';
import { chat2Link, chatLinkAt, chatTarget, fillLink, firstEnabledTokenId, plainKey, serverAddress, type ChatTarget, type LinkResult } from './chatLinks';

/** Redirect delay to /token when the user has no enabled token. */
export const NO_TOKEN_REDIRECT_MS = 1500;

type State = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; url: string; name: string };

/** The configured chats: the locally stored `chats` text, else the status object's. */
function chatsSource(statusChats: unknown): unknown {
  const raw = store().getItem('chats');
  return raw !== null ? raw : statusChats;
}

/**
 * The first enabled token's key (without `sk-`), or null (errors are thrown): the list is the token
 * resource's (the data provider's getList, first 100), and as it masks keys, the key is asked for by id.
 */
async function enabledKey(dp: GatewayDataProvider): Promise<string | null> {
  const { data } = await dp.getList('token', { pagination: { page: 1, perPage: 100 }, sort: { field: 'id', order: 'DESC' }, filter: {} });
  const id = firstEnabledTokenId(data);
  if (id === undefined) return null;
  return plainKey({ key: await fetchTokenKey(id) }) ?? null;
}

function useChatTarget(build: (key: string, address: string) => LinkResult): State {
  const translate = useTranslate();
  const notify = useNotify();
  const navigate = useNavigate();
  const { loaded, error, status } = useStatus();
  const dp = useGateway();
  const ready = loaded || !!error;
  // The tokens are read once per showing, when the status has arrived (or failed) and the
  // configuration holds (no need to read them for a broken link).
  const keyQuery = useQuery({
    queryKey: ['gateway', 'chatTokenKey'],
    queryFn: () => enabledKey(dp),
    enabled: ready && build('', '').ok,
    gcTime: 0,
    staleTime: Infinity,
    ...LOAD_ONCE,
  });
  const target: ChatTarget = ready
    ? chatTarget(
        build,
        keyQuery.data,
        serverAddress(status.server_address, window.location.origin),
        keyQuery.error ? errorText(keyQuery.error, translate) : undefined,
      )
    : { kind: 'loading' };
  const failure = target.kind === 'error' ? target.message : null;
  const toTokens = target.kind === 'error' && !!target.toTokens;

  // Each failure is notified once; with no enabled token the user is sent to the tokens page.
  useEffect(() => {
    if (failure) notify(failure, { type: 'error' });
  }, [failure, notify]);
  useEffect(() => {
    if (!toTokens) return;
    const timer = setTimeout(() => navigate('/token'), NO_TOKEN_REDIRECT_MS);
    return () => clearTimeout(timer);
  }, [toTokens, navigate]);

  // One State object per outcome (the redirect page follows it in an effect).
  const url = target.kind === 'ready' ? target.url : '';
  const name = target.kind === 'ready' ? target.name : '';
  const message = failure ? translate(failure, { _: failure }) : '';
  return useMemo<State>(() => (url ? { kind: 'ready', url, name } : message ? { kind: 'error', message } : { kind: 'loading' }), [url, name, message]);
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
