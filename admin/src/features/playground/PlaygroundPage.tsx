import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useLocation } from 'react-router-dom';
import { Title, useNotify, useTranslate } from 'react-admin';
import {
  Alert,
  Avatar,
  Box,
  Button,
  Card,
  CircularProgress,
  Collapse,
  IconButton,
  MenuItem,
  Paper,
  Slider,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import SendIcon from '@mui/icons-material/Send';
import StopIcon from '@mui/icons-material/Stop';
import DeleteSweepIcon from '@mui/icons-material/DeleteSweepOutlined';
import TuneIcon from '@mui/icons-material/Tune';
import ExpandLessIcon from '@mui/icons-material/ExpandLess';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import SmartToyIcon from '@mui/icons-material/SmartToyOutlined';
import PersonIcon from '@mui/icons-material/PersonOutline';
import { errorText } from '../../lib/http';
import { useGateway } from '../../resources/shared/api';
import { LOAD_ONCE, useQueryError } from '../../resources/shared/hooks';
import { getUserId, store } from '../../lib/storage';
import { useIsMobile } from '../../layout/useIsMobile';
import {
  TEMPERATURE,
  appendDelta,
  buildRequest,
  completeMessage,
  failMessage,
  isBusy,
  loadChatsFor,
  STORAGE_KEYS,
  loadSettings,
  loadingMessage,
  pickModel,
  saveChatsFor,
  saveSettings,
  streamChat,
  userMessage,
  type ChatMessage,
  type ChatSettings,
} from './playgroundChat';

interface GroupOption {
  desc: string;
  ratio: number;
}
const NO_GROUPS: Record<string, GroupOption> = {};

/** /playground: a sidebar of settings and a streaming chat box. */
export function PlaygroundPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const location = useLocation();
  const isMobile = useIsMobile();
  const expired = new URLSearchParams(location.search).has('expired');

  const [settings, setSettings] = useState<ChatSettings>(() => loadSettings(store()));
  // The conversation shown belongs to `convModel`; each model keeps its own (localStorage).
  const [convModel, setConvModel] = useState(() => settings.model);
  const [messages, setMessages] = useState<ChatMessage[]>(() => loadChatsFor(store(), settings.model).messages);
  const dp = useGateway();
  const notifyLoadError = (err: unknown) => notify(errorText(err, translate), { type: 'error' });
  const userModels = useQuery({ queryKey: ['gateway', 'userModels'], queryFn: () => dp.userModels().then((r) => r.data), ...LOAD_ONCE });
  useQueryError(userModels, notifyLoadError);
  const selfGroups = useQuery({ queryKey: ['gateway', 'selfGroups'], queryFn: () => dp.selfGroups().then((r) => r.data), ...LOAD_ONCE });
  useQueryError(selfGroups, notifyLoadError);
  const models = useMemo(() => (userModels.data ?? []).filter((m): m is string => typeof m === 'string'), [userModels.data]);
  const groups: Record<string, GroupOption> = selfGroups.data && typeof selfGroups.data === 'object' ? selfGroups.data : NO_GROUPS;
  const [input, setInput] = useState('');
  const [sidebarOpen, setSidebarOpen] = useState(true);
  const abortRef = useRef<AbortController | null>(null);
  const endRef = useRef<HTMLDivElement | null>(null);

  // Corrupt stored conversation: say so once, start afresh.
  useEffect(() => {
    if (loadChatsFor(store(), convModel).error) {
      notify('feat.playground.parse_failed', { type: 'error' });
      store().removeItem(STORAGE_KEYS.byModel);
      store().removeItem(STORAGE_KEYS.chats);
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps -- checked once, for the conversation first shown
  }, [notify]);

  // Another model picked: stop a running answer and show that model's conversation.
  useEffect(() => {
    if (settings.model === convModel) return;
    abortRef.current?.abort();
    setConvModel(settings.model);
    setMessages(loadChatsFor(store(), settings.model).messages);
  }, [settings.model, convModel]);

  useEffect(() => setSidebarOpen(!isMobile), [isMobile]);

  // Loaded models and groups correct the stored choice: a model the user may not use, a group gone.
  useEffect(() => {
    if (userModels.data) setSettings((s) => ({ ...s, model: pickModel(s.model, models) }));
  }, [userModels.data, models]);
  useEffect(() => {
    if (selfGroups.data) setSettings((s) => (s.group && !(s.group in groups) ? { ...s, group: '' } : s));
  }, [selfGroups.data, groups]);

  useEffect(() => saveSettings(store(), settings), [settings]);
  useEffect(() => saveChatsFor(store(), convModel, messages), [convModel, messages]);
  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'end' });
  }, [messages]);
  useEffect(() => () => abortRef.current?.abort(), []);

  const busy = isBusy(messages);

  const send = useCallback(() => {
    const text = input.trim();
    if (!text || busy) return;
    const question = userMessage(text);
    const answer = loadingMessage();
    const history = [...messages, question];
    setMessages([...history, answer]);
    setInput('');
    const ctrl = new AbortController();
    abortRef.current = ctrl;
    void streamChat(
      (url, init) => window.fetch(url, init),
      buildRequest(settings, history),
      getUserId(),
      {
        onDelta: (t) => setMessages((l) => appendDelta(l, answer.id, t)),
        onDone: () => setMessages((l) => completeMessage(l, answer.id)),
        onError: (m) => setMessages((l) => failMessage(l, answer.id, m)),
      },
      ctrl.signal,
    ).finally(() => {
      if (abortRef.current === ctrl) abortRef.current = null;
    });
  }, [input, busy, messages, settings]);

  const stop = () => abortRef.current?.abort();
  const clear = () => {
    abortRef.current?.abort();
    setMessages([]);
  };

  const set = <K extends keyof ChatSettings>(k: K, v: ChatSettings[K]) => setSettings((s) => ({ ...s, [k]: v }));
  const modelOptions = models.includes(settings.model) || !settings.model ? models : [settings.model, ...models];

  const sidebar = (
    <Stack spacing={2} sx={{ p: 2 }} data-testid="playground-settings">
      <TextField
        select
        size="small"
        label={translate('feat.playground.group')}
        value={settings.group}
        onChange={(e) => set('group', e.target.value)}
        slotProps={{ select: { displayEmpty: true }, inputLabel: { shrink: true } }}
        data-testid="playground-group"
      >
        <MenuItem value="">{translate('feat.playground.own_group')}</MenuItem>
        {Object.entries(groups).map(([g, o]) => (
          <MenuItem key={g} value={g}>
            {g} — {o.desc} ({translate('feat.playground.ratio', { ratio: o.ratio })})
          </MenuItem>
        ))}
      </TextField>
      <TextField
        select
        size="small"
        label={translate('feat.playground.model')}
        value={settings.model}
        onChange={(e) => set('model', e.target.value)}
        data-testid="playground-model"
      >
        {modelOptions.map((m) => (
          <MenuItem key={m} value={m}>
            {m}
          </MenuItem>
        ))}
      </TextField>
      <Box sx={{ px: 1 }}>
        <Typography variant="body2" color="text.secondary" sx={{ mx: -1 }}>
          {translate('feat.playground.temperature')}: {settings.temperature > 0 ? settings.temperature.toFixed(1) : translate('feat.playground.default')}
        </Typography>
        <Slider
          size="small"
          min={TEMPERATURE.min}
          max={TEMPERATURE.max}
          step={TEMPERATURE.step}
          marks
          value={settings.temperature > 0 ? settings.temperature : TEMPERATURE.min}
          onChange={(_, v) => set('temperature', Math.round(Number(v) * 10) / 10)}
          valueLabelDisplay="auto"
          aria-label={translate('feat.playground.temperature')}
        />
      </Box>
      <TextField
        size="small"
        type="number"
        label={translate('feat.playground.max_tokens')}
        helperText={translate('feat.playground.max_tokens_help')}
        value={settings.max_tokens}
        onChange={(e) => {
          const n = Math.floor(Number(e.target.value));
          set('max_tokens', Number.isFinite(n) && n > 0 ? n : 0);
        }}
        slotProps={{ htmlInput: { min: 0, step: 1 } }}
      />
      <TextField
        size="small"
        multiline
        minRows={3}
        maxRows={10}
        label={translate('feat.playground.system_prompt')}
        value={settings.system_prompt}
        onChange={(e) => set('system_prompt', e.target.value)}
      />
    </Stack>
  );

  return (
    <Box sx={{ py: 2, display: 'flex', flexDirection: 'column', gap: 2, height: { md: 'calc(100vh - 120px)' }, minHeight: 480 }} data-testid="playground-page">
      <Title title={translate('feat.playground.title')} />
      {expired && <Alert severity="warning">{translate('feat.playground.expired')}</Alert>}
      <Box sx={{ display: 'flex', flexDirection: { xs: 'column', md: 'row' }, gap: 2, flex: 1, minHeight: 0 }}>
        <Card variant="outlined" sx={{ width: { md: 300 }, flexShrink: 0, overflow: 'auto' }}>
          <Box
            sx={{ display: 'flex', alignItems: 'center', px: 2, pt: 1.5, pb: sidebarOpen ? 0 : 1.5, cursor: isMobile ? 'pointer' : 'default' }}
            onClick={() => isMobile && setSidebarOpen((o) => !o)}
          >
            <TuneIcon fontSize="small" sx={{ mr: 1 }} color="action" />
            <Typography variant="subtitle1" sx={{ flex: 1, fontWeight: 600 }}>
              {translate('feat.playground.settings')}
            </Typography>
            {isMobile && (
              <IconButton size="small" aria-label={translate('feat.playground.toggle_settings')} data-testid="playground-toggle-settings">
                {sidebarOpen ? <ExpandLessIcon /> : <ExpandMoreIcon />}
              </IconButton>
            )}
          </Box>
          <Collapse in={sidebarOpen}>{sidebar}</Collapse>
        </Card>
        <Card variant="outlined" sx={{ flex: 1, display: 'flex', flexDirection: 'column', minHeight: { xs: 420, md: 0 } }}>
          <Box sx={{ display: 'flex', alignItems: 'center', px: 2, py: 1, borderBottom: 1, borderColor: 'divider' }}>
            <Typography variant="subtitle1" sx={{ flex: 1, fontWeight: 600 }} noWrap>
              {settings.model}
            </Typography>
            <Tooltip title={translate('feat.playground.clear')}>
              <span>
                <Button size="small" color="inherit" startIcon={<DeleteSweepIcon />} onClick={clear} disabled={!messages.length} data-testid="playground-clear">
                  {translate('feat.playground.clear')}
                </Button>
              </span>
            </Tooltip>
          </Box>
          <Box sx={{ flex: 1, overflow: 'auto', p: 2, display: 'flex', flexDirection: 'column', gap: 1.5 }} data-testid="playground-messages">
            {messages.length === 0 && (
              <Box sx={{ m: 'auto', textAlign: 'center', color: 'text.secondary' }}>
                <SmartToyIcon sx={{ fontSize: 48, opacity: 0.5 }} />
                <Typography>{translate('feat.playground.empty')}</Typography>
              </Box>
            )}
            {messages.map((m) => (
              <Bubble key={m.id} message={m} />
            ))}
            <div ref={endRef} />
          </Box>
          <Box sx={{ display: 'flex', gap: 1, p: 1.5, borderTop: 1, borderColor: 'divider', alignItems: 'flex-end' }}>
            <TextField
              fullWidth
              multiline
              maxRows={6}
              size="small"
              placeholder={translate('feat.playground.placeholder')}
              value={input}
              onChange={(e) => setInput(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
                  e.preventDefault();
                  send();
                }
              }}
              slotProps={{ htmlInput: { 'data-testid': 'playground-input' } }}
            />
            {busy ? (
              <Button
                variant="outlined"
                color="warning"
                onClick={stop}
                startIcon={<StopIcon />}
                data-testid="playground-stop"
                sx={{ whiteSpace: 'nowrap', flexShrink: 0 }}
              >
                {translate('feat.playground.stop')}
              </Button>
            ) : (
              <Button
                variant="contained"
                onClick={send}
                disabled={!input.trim()}
                endIcon={<SendIcon />}
                data-testid="playground-send"
                sx={{ whiteSpace: 'nowrap', flexShrink: 0 }}
              >
                {translate('feat.playground.send')}
              </Button>
            )}
          </Box>
        </Card>
      </Box>
    </Box>
  );
}

function Bubble({ message }: { message: ChatMessage }) {
  const translate = useTranslate();
  const mine = message.role === 'user';
  const error = message.status === 'error';
  return (
    <Box
      sx={{ display: 'flex', gap: 1, flexDirection: mine ? 'row-reverse' : 'row', alignItems: 'flex-start' }}
      data-testid="playground-message"
      data-role={message.role}
      data-status={message.status}
    >
      <Avatar sx={{ width: 30, height: 30, bgcolor: mine ? 'primary.main' : error ? 'error.main' : 'secondary.main' }}>
        {mine ? <PersonIcon fontSize="small" /> : <SmartToyIcon fontSize="small" />}
      </Avatar>
      <Paper
        variant="outlined"
        sx={(t) => ({
          px: 1.5,
          py: 1,
          maxWidth: { xs: '85%', md: '75%' },
          whiteSpace: 'pre-wrap',
          wordBreak: 'break-word',
          bgcolor: mine ? (t.palette.mode === 'dark' ? 'primary.dark' : 'primary.light') : error ? 'transparent' : 'background.default',
          color: mine ? 'primary.contrastText' : error ? 'error.main' : 'text.primary',
          borderColor: error ? 'error.main' : 'divider',
        })}
      >
        {message.status === 'loading' ? (
          <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, color: 'text.secondary' }}>
            <CircularProgress size={14} />
            <Typography variant="body2">{translate('feat.playground.thinking')}</Typography>
          </Box>
        ) : (
          <Typography variant="body2" component="div">
            {message.content}
            {message.status === 'incomplete' && (
              <Box component="span" sx={{ opacity: 0.6 }}>
                ▍
              </Box>
            )}
          </Typography>
        )}
      </Paper>
    </Box>
  );
}
