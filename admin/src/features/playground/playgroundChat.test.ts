import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../../lib/storage';
import {
  DEFAULT_SETTINGS,
  STORAGE_KEYS,
  appendDelta,
  buildRequest,
  clampTemperature,
  completeMessage,
  createSseParser,
  errorMessageOf,
  failMessage,
  isBusy,
  loadChats,
  loadChatsFor,
  saveChatsFor,
  loadSettings,
  loadingMessage,
  pickModel,
  saveChats,
  saveSettings,
  streamChat,
  userMessage,
  type ChatMessage,
} from './playgroundChat';

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;

function sseResponse(parts: string[], opts: { status?: number; failAfter?: number } = {}): Response {
  const enc = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      if (opts.failAfter !== undefined && i === opts.failAfter) {
        ctrl.error(new Error('network reset'));
        return;
      }
      if (i < parts.length) ctrl.enqueue(enc.encode(parts[i++]));
      else ctrl.close();
    },
  });
  return new Response(body, { status: opts.status ?? 200, headers: { 'content-type': 'text/event-stream' } });
}

function collect() {
  const out = { text: '', done: 0, errors: [] as string[] };
  return {
    out,
    handlers: {
      onDelta: (t: string) => void (out.text += t),
      onDone: () => void out.done++,
      onError: (m: string) => void out.errors.push(m),
    },
  };
}

describe('message lifecycle', () => {
  it('loading → incomplete → complete', () => {
    const u = userMessage('hi', 1);
    const a = loadingMessage(2);
    let list: ChatMessage[] = [u, a];
    expect(a.status).toBe('loading');
    expect(isBusy(list)).toBe(true);
    list = appendDelta(list, a.id, 'Hel');
    list = appendDelta(list, a.id, 'lo');
    expect(list[1]).toMatchObject({ content: 'Hello', status: 'incomplete' });
    expect(list[0]).toBe(u);
    list = completeMessage(list, a.id);
    expect(list[1]!.status).toBe('complete');
    expect(isBusy(list)).toBe(false);
  });
  it('a stream error appends the error text and marks the message error', () => {
    const a = loadingMessage();
    let list = appendDelta([a], a.id, 'partial');
    list = failMessage(list, a.id, 'upstream died');
    expect(list[0]).toMatchObject({ content: 'partial\n\nupstream died', status: 'error' });
    expect(completeMessage(list, a.id)[0]!.status).toBe('error');
    expect(failMessage([loadingMessage()], 'x', 'e')[0]!.status).toBe('loading');
    const b = loadingMessage();
    expect(failMessage([b], b.id, 'boom')[0]!.content).toBe('boom');
  });
});

describe('request body', () => {
  it('sends the system prompt, the conversation, stream, model, group, temperature; max_tokens only when set', () => {
    const hist = [
      userMessage('q1'),
      { ...loadingMessage(), content: 'a1', status: 'complete' as const },
      { ...loadingMessage(), content: 'bad', status: 'error' as const },
      userMessage('q2'),
    ];
    const body = buildRequest({ ...DEFAULT_SETTINGS, model: 'm1', group: 'vip', temperature: 0.7 }, hist);
    expect(body).toEqual({
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
        { role: 'user', content: 'q2' },
      ],
      stream: true,
      model: 'm1',
      group: 'vip',
      temperature: 0.7,
    });
    const b2 = buildRequest({ ...DEFAULT_SETTINGS, system_prompt: ' ', max_tokens: 256 }, [userMessage('x')]);
    expect(b2).toEqual({ messages: [{ role: 'user', content: 'x' }], stream: true, model: 'gpt-4o-mini', temperature: 0, max_tokens: 256 });
  });
  it('defaults: gpt-4o-mini, max tokens 0, temperature 0, a helpful assistant', () => {
    expect(DEFAULT_SETTINGS).toEqual({ model: 'gpt-4o-mini', group: '', max_tokens: 0, temperature: 0, system_prompt: 'You are a helpful assistant.' });
  });
  it('temperature stays within 0.1–1 in steps of 0.1 (0 = default)', () => {
    expect(clampTemperature(0.05 + 0.7)).toBe(0.8);
    expect(clampTemperature(3)).toBe(1);
    expect(clampTemperature(0.01)).toBe(0.1);
    expect(clampTemperature(0)).toBe(0);
    expect(clampTemperature(NaN)).toBe(0);
  });
  it('picks a model the user may use', () => {
    expect(pickModel('x', [])).toBe('x');
    expect(pickModel('x', ['a', 'x'])).toBe('x');
    expect(pickModel('x', ['a', 'gpt-4o-mini'])).toBe('gpt-4o-mini');
    expect(pickModel('x', ['a', 'b'])).toBe('a');
  });
});

describe('stored chats', () => {
  it('round-trips and completes messages interrupted by a closed page', () => {
    const s = memoryStorage();
    expect(loadChats(s)).toEqual({ messages: [] });
    const u = userMessage('hi');
    saveChats(s, [u, { ...loadingMessage(), content: 'par', status: 'incomplete' }]);
    const back = loadChats(s);
    expect(back.error).toBeUndefined();
    expect(back.messages[0]).toEqual(u);
    expect(back.messages[1]).toMatchObject({ content: 'par', status: 'complete' });
  });
  it('reports corrupt data', () => {
    const s = memoryStorage();
    for (const bad of ['{oops', '{"a":1}', '[1]', '[{"role":"bot","content":"x"}]']) {
      s.setItem(STORAGE_KEYS.chats, bad);
      expect(loadChats(s)).toEqual({ messages: [], error: 'parse' });
    }
  });
  it('keeps one conversation per model, and clearing one leaves the others', () => {
    const s = memoryStorage();
    const a = userMessage('to a');
    const b = userMessage('to b');
    saveChatsFor(s, 'model-a', [a]);
    saveChatsFor(s, 'model-b', [b]);
    expect(loadChatsFor(s, 'model-a').messages).toEqual([a]);
    expect(loadChatsFor(s, 'model-b').messages).toEqual([b]);
    expect(loadChatsFor(s, 'model-c').messages).toEqual([]);
    saveChatsFor(s, 'model-a', []);
    expect(loadChatsFor(s, 'model-a').messages).toEqual([]);
    expect(loadChatsFor(s, 'model-b').messages).toEqual([b]);
    expect(JSON.parse(s.getItem(STORAGE_KEYS.byModel)!)).not.toHaveProperty('model-a');
  });
  it('offers an older single conversation to the first model, then keeps it under that model', () => {
    const s = memoryStorage();
    const old = userMessage('old');
    saveChats(s, [old]);
    expect(loadChatsFor(s, 'gpt').messages).toEqual([old]);
    saveChatsFor(s, 'gpt', [old]);
    expect(s.getItem(STORAGE_KEYS.chats)).toBeNull();
    expect(loadChatsFor(s, 'other').messages).toEqual([]);
  });
  it('reports a corrupt per-model store', () => {
    const s = memoryStorage();
    s.setItem(STORAGE_KEYS.byModel, '[1]');
    expect(loadChatsFor(s, 'x')).toEqual({ messages: [], error: 'parse' });
    s.setItem(STORAGE_KEYS.byModel, JSON.stringify({ x: [{ role: 'bot', content: 1 }] }));
    expect(loadChatsFor(s, 'x')).toEqual({ messages: [], error: 'parse' });
  });
  it('keeps the settings, refusing odd values', () => {
    const s = memoryStorage();
    expect(loadSettings(s)).toEqual(DEFAULT_SETTINGS);
    saveSettings(s, { model: 'm', group: 'vip', max_tokens: 100, temperature: 0.5, system_prompt: 'be brief' });
    expect(loadSettings(s)).toEqual({ model: 'm', group: 'vip', max_tokens: 100, temperature: 0.5, system_prompt: 'be brief' });
    s.setItem(STORAGE_KEYS.settings, JSON.stringify({ model: 3, max_tokens: -5, temperature: 9 }));
    expect(loadSettings(s)).toEqual({ ...DEFAULT_SETTINGS, temperature: 1 });
    s.setItem(STORAGE_KEYS.settings, 'nope');
    expect(loadSettings(s)).toEqual(DEFAULT_SETTINGS);
  });
});

describe('SSE parser', () => {
  it('handles events split across chunks, comments and the done marker', () => {
    const p = createSseParser();
    const whole = `: keep-alive\n\n${chunk('Hel')}${chunk('lo')}data: {"choices":[{"delta":{}}]}\n\ndata: [DONE]\n\n`;
    const events = [];
    for (let i = 0; i < whole.length; i += 7) events.push(...p.push(whole.slice(i, i + 7)));
    events.push(...p.end());
    expect(events).toEqual([{ type: 'delta', text: 'Hel' }, { type: 'delta', text: 'lo' }, { type: 'done' }]);
  });
  it('reports error events and a last line without newline', () => {
    const p = createSseParser();
    expect(p.push('data: {"error":{"message":"quota exceeded"}}\r\n')).toEqual([{ type: 'error', message: 'quota exceeded' }]);
    expect(p.push('data: [DONE]')).toEqual([]);
    expect(p.end()).toEqual([{ type: 'done' }]);
  });
  it('reads error messages of failed answers', () => {
    expect(errorMessageOf(403, '{"error":{"message":"无权访问 vip 分组"}}')).toBe('无权访问 vip 分组');
    expect(errorMessageOf(401, '{"success":false,"message":"未登录"}')).toBe('未登录');
    expect(errorMessageOf(502, '')).toBe('HTTP 502');
    expect(errorMessageOf(502, 'Bad gateway')).toBe('Bad gateway');
  });
});

describe('streamChat', () => {
  it('posts with the user header and cookie and streams deltas until done', async () => {
    const calls: Array<{ url: string; init: RequestInit }> = [];
    const { out, handlers } = collect();
    await streamChat(
      async (url, init) => {
        calls.push({ url, init });
        return sseResponse([chunk('Hello'), chunk(' from'), chunk(' the mock'), 'data: [DONE]\n\n', chunk('ignored')]);
      },
      { model: 'm', stream: true },
      7,
      handlers,
    );
    expect(out).toEqual({ text: 'Hello from the mock', done: 1, errors: [] });
    expect(calls[0]!.url).toBe('/pg/chat/completions');
    expect(calls[0]!.init.method).toBe('POST');
    expect(calls[0]!.init.credentials).toBe('include');
    expect((calls[0]!.init.headers as Record<string, string>)['New-Api-User']).toBe('7');
    expect(JSON.parse(String(calls[0]!.init.body))).toEqual({ model: 'm', stream: true });
  });
  it('completes when the connection closes without a done marker', async () => {
    const { out, handlers } = collect();
    await streamChat(async () => sseResponse([chunk('a'), chunk('b')]), {}, 1, handlers);
    expect(out).toEqual({ text: 'ab', done: 1, errors: [] });
  });
  it('errors on an HTTP failure, an error event, a broken stream and a network failure', async () => {
    let c = collect();
    await streamChat(async () => new Response('{"error":{"message":"model not found"}}', { status: 503 }), {}, 1, c.handlers);
    expect(c.out).toEqual({ text: '', done: 0, errors: ['model not found'] });
    c = collect();
    await streamChat(async () => sseResponse([chunk('x'), 'data: {"error":{"message":"boom"}}\n\n']), {}, 1, c.handlers);
    expect(c.out).toEqual({ text: 'x', done: 0, errors: ['boom'] });
    c = collect();
    await streamChat(async () => sseResponse([chunk('y')], { failAfter: 1 }), {}, 1, c.handlers);
    expect(c.out).toEqual({ text: 'y', done: 0, errors: ['network reset'] });
    c = collect();
    await streamChat(
      async () => {
        throw new Error('Failed to fetch');
      },
      {},
      1,
      c.handlers,
    );
    expect(c.out).toEqual({ text: '', done: 0, errors: ['Failed to fetch'] });
  });
  it('an abort by the user completes the message', async () => {
    const ctrl = new AbortController();
    const { out, handlers } = collect();
    ctrl.abort();
    await streamChat(
      async () => {
        throw new DOMException('aborted', 'AbortError');
      },
      {},
      1,
      handlers,
      ctrl.signal,
    );
    expect(out).toEqual({ text: '', done: 1, errors: [] });
  });
});
