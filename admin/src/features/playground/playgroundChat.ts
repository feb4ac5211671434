/**
 * The playground's chat: message states and their lifecycle, the stored history and settings, the
 * request body and the SSE parser. Pure, tested in playgroundChat.test.ts.
 */
import { storedLanguage, type KeyValueStore } from '../../lib/storage';

export type ChatRole = 'user' | 'assistant' | 'system';
export type ChatStatus = 'loading' | 'incomplete' | 'complete' | 'error';

export interface ChatMessage {
  id: string;
  role: ChatRole;
  content: string;
  /** epoch milliseconds */
  createAt: number;
  status: ChatStatus;
}

export interface ChatSettings {
  model: string;
  group: string;
  max_tokens: number;
  temperature: number;
  system_prompt: string;
}

export const DEFAULT_MODEL = 'gpt-4o-mini';
export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';
export const DEFAULT_SETTINGS: ChatSettings = { model: DEFAULT_MODEL, group: '', max_tokens: 0, temperature: 0, system_prompt: DEFAULT_SYSTEM_PROMPT };
export const TEMPERATURE = { min: 0.1, max: 1, step: 0.1 } as const;

/** Local storage: the conversation and the sidebar settings of the playground. */
export const STORAGE_KEYS = { chats: 'playground_chats', settings: 'playground_settings', byModel: 'playground_chats_by_model' } as const;

let seq = 0;
export function newId(now = Date.now()): string {
  seq = (seq + 1) % 1e6;
  return `${now.toString(36)}-${seq.toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
}

export function userMessage(content: string, now = Date.now()): ChatMessage {
  return { id: newId(now), role: 'user', content, createAt: now, status: 'complete' };
}

/** The assistant's placeholder while the answer is awaited. */
export function loadingMessage(now = Date.now()): ChatMessage {
  return { id: newId(now), role: 'assistant', content: '', createAt: now, status: 'loading' };
}

/** Streamed text arrives: appended, the message becomes incomplete. */
export function appendDelta(list: readonly ChatMessage[], id: string, delta: string): ChatMessage[] {
  if (!delta) return list as ChatMessage[];
  return list.map((m) => (m.id === id ? { ...m, content: m.content + delta, status: 'incomplete' } : m));
}

/** Done marker or closed connection: the message is complete (an error stays an error). */
export function completeMessage(list: readonly ChatMessage[], id: string): ChatMessage[] {
  return list.map((m) => (m.id === id && m.status !== 'error' ? { ...m, status: 'complete' } : m));
}

/** Stream error: the error text is appended and the message marked error. */
export function failMessage(list: readonly ChatMessage[], id: string, error: string): ChatMessage[] {
  return list.map((m) => (m.id === id ? { ...m, content: m.content ? `${m.content}\n\n${error}` : error, status: 'error' } : m));
}

export function isBusy(list: readonly ChatMessage[]): boolean {
  return list.some((m) => m.status === 'loading' || m.status === 'incomplete');
}

/** The chat-completions body: the system prompt, the conversation (errors and empty answers left out). */
export function buildRequest(settings: ChatSettings, history: readonly ChatMessage[]): Record<string, unknown> {
  const messages: Array<{ role: ChatRole; content: string }> = [];
  if (settings.system_prompt.trim()) messages.push({ role: 'system', content: settings.system_prompt });
  for (const m of history) {
    if (m.status === 'error' || m.status === 'loading' || !m.content) continue;
    if (m.role === 'system') continue;
    messages.push({ role: m.role, content: m.content });
  }
  const body: Record<string, unknown> = { messages, stream: true, model: settings.model, temperature: settings.temperature };
  if (settings.group) body.group = settings.group;
  if (settings.max_tokens > 0) body.max_tokens = Math.floor(settings.max_tokens);
  return body;
}

const STATUSES: readonly ChatStatus[] = ['loading', 'incomplete', 'complete', 'error'];
const ROLES: readonly ChatRole[] = ['user', 'assistant', 'system'];

/**
 * Reads the stored conversation. Missing → empty; unreadable → `error: 'parse'` (the page shows
 * 聊天数据解析失败 and starts afresh). A message left loading/incomplete by a closed page is complete.
 */
export function loadChats(s: Pick<KeyValueStore, 'getItem'>): { messages: ChatMessage[]; error?: 'parse' } {
  const raw = s.getItem(STORAGE_KEYS.chats);
  if (raw == null || raw === '') return { messages: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { messages: [], error: 'parse' };
  }
  return parseMessages(parsed);
}

/** A stored message list, checked (any odd entry: `error: 'parse'`). */
function parseMessages(parsed: unknown): { messages: ChatMessage[]; error?: 'parse' } {
  if (!Array.isArray(parsed)) return { messages: [], error: 'parse' };
  const out: ChatMessage[] = [];
  for (const m of parsed) {
    if (!m || typeof m !== 'object') return { messages: [], error: 'parse' };
    const o = m as Record<string, unknown>;
    if (!ROLES.includes(o.role as ChatRole) || typeof o.content !== 'string') return { messages: [], error: 'parse' };
    let status = STATUSES.includes(o.status as ChatStatus) ? (o.status as ChatStatus) : 'complete';
    if (status === 'loading' || status === 'incomplete') status = 'complete';
    out.push({
      id: typeof o.id === 'string' && o.id ? o.id : newId(),
      role: o.role as ChatRole,
      content: o.content,
      createAt: Number(o.createAt) || 0,
      status,
    });
  }
  return { messages: out };
}

function readByModel(s: Pick<KeyValueStore, 'getItem'>): Record<string, unknown> | 'parse' {
  const raw = s.getItem(STORAGE_KEYS.byModel);
  if (raw == null || raw === '') return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : 'parse';
  } catch {
    return 'parse';
  }
}

/**
 * The stored conversation of one model (each model keeps its own, across page changes and
 * reloads). A conversation stored before conversations were kept per model is offered to the
 * first model opened, then saved under it.
 */
export function loadChatsFor(s: Pick<KeyValueStore, 'getItem'>, model: string): { messages: ChatMessage[]; error?: 'parse' } {
  const all = readByModel(s);
  if (all === 'parse') return { messages: [], error: 'parse' };
  if (Object.prototype.hasOwnProperty.call(all, model)) return parseMessages(all[model]);
  return loadChats(s);
}

/** Stores one model's conversation (an empty one is dropped); the pre-per-model key is retired. */
export function saveChatsFor(s: KeyValueStore, model: string, list: readonly ChatMessage[]): void {
  const read = readByModel(s);
  const all = read === 'parse' ? {} : { ...read };
  if (list.length) all[model] = list;
  else delete all[model];
  s.setItem(STORAGE_KEYS.byModel, JSON.stringify(all));
  s.removeItem(STORAGE_KEYS.chats);
}

export function saveChats(s: Pick<KeyValueStore, 'setItem'>, list: readonly ChatMessage[]): void {
  s.setItem(STORAGE_KEYS.chats, JSON.stringify(list));
}

export function clampTemperature(v: number): number {
  if (!Number.isFinite(v) || v <= 0) return 0;
  return Math.min(TEMPERATURE.max, Math.max(TEMPERATURE.min, Math.round(v * 10) / 10));
}

export function loadSettings(s: Pick<KeyValueStore, 'getItem'>): ChatSettings {
  try {
    const raw = s.getItem(STORAGE_KEYS.settings);
    if (!raw) return { ...DEFAULT_SETTINGS };
    const o = JSON.parse(raw) as Record<string, unknown>;
    return {
      model: typeof o.model === 'string' && o.model ? o.model : DEFAULT_MODEL,
      group: typeof o.group === 'string' ? o.group : '',
      max_tokens: Number.isFinite(Number(o.max_tokens)) && Number(o.max_tokens) > 0 ? Math.floor(Number(o.max_tokens)) : 0,
      temperature: clampTemperature(Number(o.temperature)),
      system_prompt: typeof o.system_prompt === 'string' ? o.system_prompt : DEFAULT_SYSTEM_PROMPT,
    };
  } catch {
    return { ...DEFAULT_SETTINGS };
  }
}

export function saveSettings(s: Pick<KeyValueStore, 'setItem'>, settings: ChatSettings): void {
  s.setItem(STORAGE_KEYS.settings, JSON.stringify(settings));
}

/** The model to show: the wanted one when offered (or nothing is offered yet), else gpt-4o-mini when offered, else the first. */
export function pickModel(wanted: string, offered: readonly string[]): string {
  if (!offered.length || offered.includes(wanted)) return wanted;
  if (offered.includes(DEFAULT_MODEL)) return DEFAULT_MODEL;
  return offered[0]!;
}

/* ------------------------------------------------------------------ server-sent events */

export type SseEvent = { type: 'delta'; text: string } | { type: 'done' } | { type: 'error'; message: string };

/** `v?.[key]` on a parsed JSON value of unknown shape. */
const at = (v: unknown, key: string | number): unknown => (v === null || v === undefined ? undefined : (v as Record<string | number, unknown>)[key]);

/**
 * Incremental SSE parser: feed text chunks (split anywhere), get the events of the complete lines.
 * `data: [DONE]` → done; a JSON with choices[0].delta.content → delta; a JSON with `error` → error.
 */
export function createSseParser() {
  let buffer = '';
  const parseLine = (line: string): SseEvent | null => {
    if (!line.startsWith('data:')) return null;
    const data = line.slice(5).trim();
    if (!data) return null;
    if (data === '[DONE]') return { type: 'done' };
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return null;
    }
    const e = json ? at(json, 'error') : undefined;
    if (e) return { type: 'error', message: typeof e === 'string' ? e : String(at(e, 'message') ?? JSON.stringify(e)) };
    const text = at(at(at(at(json, 'choices'), 0), 'delta'), 'content');
    if (typeof text === 'string' && text) return { type: 'delta', text };
    return null;
  };
  return {
    push(chunk: string): SseEvent[] {
      buffer += chunk;
      const lines = buffer.split(/\r?\n/);
      buffer = lines.pop() ?? '';
      const out: SseEvent[] = [];
      for (const l of lines) {
        const ev = parseLine(l);
        if (ev) out.push(ev);
      }
      return out;
    },
    /** The stream ended: a last line without newline still counts. */
    end(): SseEvent[] {
      const rest = buffer;
      buffer = '';
      const ev = parseLine(rest.trim());
      return ev ? [ev] : [];
    },
  };
}

/** The message of a failed (non-2xx) answer: the OpenAI error's message, the envelope's, or the text. */
export function errorMessageOf(status: number, text: string): string {
  try {
    const j = JSON.parse(text);
    const m = j?.error?.message ?? j?.message;
    if (typeof m === 'string' && m) return m;
  } catch {
    /* not JSON */
  }
  return text.trim() || `HTTP ${status}`;
}

export interface StreamHandlers {
  onDelta(text: string): void;
  onDone(): void;
  onError(message: string): void;
}

export type StreamFetch = (url: string, init: RequestInit) => Promise<Response>;

/**
 * POST /pg/chat/completions with the user id header and the session cookie, reading the SSE body
 * through a ReadableStream. Exactly one of onDone / onError is called (unless aborted: then onDone).
 */
export async function streamChat(
  fetchFn: StreamFetch,
  body: Record<string, unknown>,
  userId: number | string | undefined,
  handlers: StreamHandlers,
  signal?: AbortSignal,
): Promise<void> {
  // The playground's errors come from the server in the console's language.
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'Accept-Language': storedLanguage() };
  if (userId !== undefined && userId !== '') headers['New-Api-User'] = String(userId);
  let res: Response;
  try {
    res = await fetchFn('/pg/chat/completions', { method: 'POST', headers, body: JSON.stringify(body), credentials: 'include', signal });
  } catch (err) {
    if (signal?.aborted) return handlers.onDone();
    return handlers.onError((err as Error)?.message || String(err));
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    return handlers.onError(errorMessageOf(res.status, text));
  }
  if (!res.body) {
    // No stream support: a whole answer (or an SSE text) at once.
    const text = await res.text().catch(() => '');
    const p = createSseParser();
    for (const ev of [...p.push(text), ...p.end()]) {
      if (ev.type === 'delta') handlers.onDelta(ev.text);
      else if (ev.type === 'error') return handlers.onError(ev.message);
    }
    return handlers.onDone();
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const parser = createSseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const events = done ? [...parser.push(decoder.decode()), ...parser.end()] : parser.push(decoder.decode(value, { stream: true }));
      for (const ev of events) {
        if (ev.type === 'delta') handlers.onDelta(ev.text);
        else if (ev.type === 'error') {
          await reader.cancel().catch(() => undefined);
          return handlers.onError(ev.message);
        } else {
          await reader.cancel().catch(() => undefined);
          return handlers.onDone();
        }
      }
      if (done) return handlers.onDone();
    }
  } catch (err) {
    if (signal?.aborted) return handlers.onDone();
    return handlers.onError((err as Error)?.message || String(err));
  }
}
