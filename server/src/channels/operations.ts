import type { AppContext } from '../context';
import { localize, msg, serverLang, t, type Lang, type Message } from '../i18n';
import { channelIdsByStatus, findChannel, recordChannelTest, splitList } from '../repositories/channels';
import { nowSec } from '../lib/time';
import { own } from '../lib/own';
import { adaptorFor, chatAdaptorOf } from './providers';
import { channelEntry } from './routeTable';
import { scrubSecrets, UpstreamError } from '../relay/errors';
import { readBody, sendUpstream, type UpstreamResponse } from '../relay/sendUpstream';
import { upstreamBounds } from '../relay/upstream';
import { checkHost, checkUrl, fetchPolicy, FetchFailedError, FetchRefusedError, pinnedAgent, untilAborted, type FetchAudience } from '../lib/guardedFetch';
import type { UpstreamRequest } from '../relay/types';
import { TestSummaryRecorder } from './testSummary';
import { autoDisableChannel, autoDisableKey, autoEnableChannel, setChannelKeyStatus, shouldAutoDisable } from './health';
import { healthBoard } from './healthBoard';
import { keyStatus, parseChannelInfo } from '../repositories/channelInfo';
import type { AdaptorContext, ChannelInfo, ChatRequest, ProviderAdaptor } from '../relay/types';
import { CHANNEL_STATUS, KEY_STATUS } from '../repositories/channelStatus';

/** Upstream calls the console makes about channels: test, fetch models (balances: channels/balance.ts). */

export interface TestResult {
  success: boolean;
  message: string;
  /** Seconds. */
  time: number;
}

const TEST_TIMEOUT_MS = 60_000;

/** The destination was refused by the channel rule (see services/channelTargets.ts): nothing was sent. */
export class ChannelTargetRefused extends UpstreamError {
  constructor(message: string | Message) {
    super(400, message, '', 'fetch_refused');
  }
}

/**
 * Sends one console-initiated call for a channel under the channel rule of `audience` (admin:
 * public addresses only; operator/root: anything but link-local unless allowed). Without a proxy
 * the connection goes to the address that was checked (pinned lookup); with one, the proxy's
 * host is checked and the proxy reaches the target. Redirects are not followed (undici's default).
 */
export async function guardedSend(
  app: AppContext,
  req: UpstreamRequest,
  signal: AbortSignal,
  audience: FetchAudience,
  proxy?: string,
): Promise<UpstreamResponse> {
  const policy = fetchPolicy(app, audience);
  const viaProxy = Boolean(proxy && /^https?:\/\//.test(proxy));
  // A WebSocket upstream (its own dispatcher) is checked like the same host over HTTP.
  const target = req.dispatcher ? req.url.replace(/^ws(s?):/i, 'http$1:') : req.url;
  const check = async () => {
    if (!viaProxy) return (await checkUrl(app, target, policy)).addresses;
    await checkHost(app, new URL(proxy!).hostname, policy);
    // The proxy resolves the target; a name we cannot resolve here is its business.
    await checkHost(app, new URL(target).hostname, policy).catch((err: unknown) => {
      if (!(err instanceof FetchFailedError)) throw err;
    });
    return [];
  };
  let addresses;
  try {
    addresses = await untilAborted(check(), signal, () => new FetchFailedError('timed out resolving the upstream'));
  } catch (err) {
    if (err instanceof FetchRefusedError) throw new ChannelTargetRefused(err.msg);
    if (err instanceof FetchFailedError) throw new UpstreamError(0, err.msg);
    throw new ChannelTargetRefused(msg('fetch.refused', { reason: 'invalid URL' }));
  }
  // Its own transport connects by itself (after the check above).
  if (viaProxy || req.dispatcher) return sendUpstream(app, req, signal, proxy);
  // A one-call agent whose lookup answers only the checked addresses, with the relay's bounds;
  // closed at once: undici lets the call in flight finish first.
  const b = upstreamBounds(app.config);
  const agent = pinnedAgent(addresses ?? [], { headersTimeout: b.headers, bodyTimeout: b.idle, connect: { timeout: b.connect } });
  try {
    return await sendUpstream(app, req, signal, undefined, agent);
  } finally {
    void agent.close().catch(() => agent.destroy());
  }
}

function testRequest(model: string): ChatRequest {
  const reasoning = /^(o1|o3|o4|gpt-5)/.test(model);
  return reasoning
    ? { model, messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 16 }
    : { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 };
}

/**
 * A real minimal chat call through the channel's adaptor. Records response_time (ms) and
 * test_time; applies the auto-enable / auto-disable rules.
 */
export async function testChannel(
  app: AppContext,
  id: number,
  modelArg?: string,
  audience: FetchAudience = 'operator',
  /** The result message's language (the sweep's summary: the server's). */
  lang: Lang = serverLang(app),
): Promise<TestResult> {
  const row = await findChannel(app.knex, id);
  if (!row) return { success: false, message: t(lang, 'channel.not_found'), time: 0 };
  const entry = channelEntry(row);
  // The adaptor chat calls use (the Responses one for an upstream that has only Responses).
  const adaptor = chatAdaptorOf(entry.info);
  if (!adaptor) return { success: false, message: t(lang, 'channel.test_tasks_only'), time: 0 };
  const model = (modelArg ?? '').trim() || String(row.test_model ?? '').trim() || splitList(row.models)[0] || 'gpt-4o-mini';
  const mapped = own(entry.modelMapping, model);
  const upstreamModel = (typeof mapped === 'string' && mapped.trim()) || model;
  // A multi-key channel is tested with its first enabled key; with none left, its first key that
  // was disabled automatically (a pass re-enables it), never a key an admin disabled.
  const keyInfo = parseChannelInfo(row.channel_info);
  const testKey =
    entry.multiKey && !entry.keyIdx.length ? entry.keys.findIndex((_, i) => keyStatus(keyInfo, i) === KEY_STATUS.autoDisabled) : (entry.keyIdx[0] ?? 0);
  if (testKey < 0) return { success: false, message: t(lang, 'channel.all_keys_disabled'), time: 0 };
  const actx: AdaptorContext = {
    channel: entry.multiKey ? { ...entry.info, key: entry.keys[testKey]! } : entry.info,
    upstreamModel,
    requestedModel: model,
    stream: false,
    endpoint: 'chat',
    option: (k) => app.options.get(k),
    paramOverride: entry.paramOverride,
  };
  const started = Date.now();
  const failure = await testOnce(app, entry, actx, adaptor, upstreamModel, audience);
  if (failure instanceof ChannelTargetRefused) return { success: false, message: localize(failure, lang), time: 0 };
  const ms = Date.now() - started;
  await recordChannelTest(app.knex, id, ms, nowSec());
  const time = ms / 1000;
  if (failure) {
    if (shouldAutoDisable(app, entry.autoBan, failure)) {
      // On a multi-key channel the tested key is the dead one.
      const reason = localize(failure, serverLang(app));
      if (entry.multiKey) await autoDisableKey(app, id, testKey, reason);
      else await autoDisableChannel(app, id, reason);
    }
    return { success: false, message: localize(failure, lang), time };
  }
  const threshold = app.options.num('ChannelDisableThreshold', 0);
  if (threshold > 0 && time > threshold && entry.autoBan && app.options.bool('AutomaticDisableChannelEnabled')) {
    const slow = msg('channel.test_too_slow', { time: time.toFixed(2), threshold });
    await autoDisableChannel(app, id, t(serverLang(app), slow));
    return { success: false, message: t(lang, slow), time };
  }
  // A passing test is a probe that passed: the channel's breaker closes.
  healthBoard(app).reset(healthBoard(app).target(id));
  if (Number(row.status) === CHANNEL_STATUS.autoDisabled && app.options.bool('AutomaticEnableChannelEnabled')) await autoEnableChannel(app, id);
  if (entry.multiKey && app.options.bool('AutomaticEnableChannelEnabled'))
    await retestDisabledKeys(app, entry, keyInfo, testKey, actx, adaptor, upstreamModel, audience);
  return { success: true, message: '', time };
}

/** One test call; the failure (scrubbed), the refusal of its destination, or undefined when it passed. */
async function testOnce(
  app: AppContext,
  entry: ReturnType<typeof channelEntry>,
  actx: AdaptorContext,
  adaptor: ProviderAdaptor,
  upstreamModel: string,
  audience: FetchAudience,
): Promise<UpstreamError | undefined> {
  try {
    const built = adaptor.chatRequest({ ...testRequest(upstreamModel), ...(entry.paramOverride ?? {}) }, actx);
    const req = adaptor.authorize ? await adaptor.authorize(built, actx, app) : built;
    const proxy = typeof entry.info.setting.proxy === 'string' ? entry.info.setting.proxy : undefined;
    const res = await guardedSend(app, req, AbortSignal.timeout(Math.min(TEST_TIMEOUT_MS, app.config.upstreamTimeoutMs)), audience, proxy);
    const text = (await readBody(res, 4 * 1024 * 1024)).toString('utf8');
    // Scrubbed here too: the message is shown in the console and kept as an auto-disable reason.
    if (res.statusCode >= 400) throw new UpstreamError(res.statusCode, scrubSecrets(adaptor.errorMessage(res.statusCode, text), entry.keys), text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UpstreamError(502, msg('channel.test_bad_answer', { text: text.slice(0, 200) }), text);
    }
    const chat = adaptor.chatResponse(json, actx);
    if (!chat || !Array.isArray(chat.choices)) throw new UpstreamError(502, msg('channel.test_bad_shape', { text: text.slice(0, 200) }), text);
    return undefined;
  } catch (err) {
    // A refused destination says nothing about the channel's health: nothing recorded, nothing disabled.
    if (err instanceof ChannelTargetRefused) return err;
    return err instanceof UpstreamError ? err : new UpstreamError(0, (err as Error).message);
  }
}

/** Auto-enable for single keys: each auto-disabled key of a multi-key channel is tested on its own; a pass enables it. */
async function retestDisabledKeys(
  app: AppContext,
  entry: ReturnType<typeof channelEntry>,
  info: ReturnType<typeof parseChannelInfo>,
  /** The key the channel's test just passed with (not tested twice). */
  passed: number,
  actx: AdaptorContext,
  adaptor: ProviderAdaptor,
  upstreamModel: string,
  audience: FetchAudience,
): Promise<void> {
  for (let i = 0; i < entry.keys.length; i++) {
    if (keyStatus(info, i) !== KEY_STATUS.autoDisabled) continue;
    const failed =
      i === passed ? undefined : await testOnce(app, entry, { ...actx, channel: { ...entry.info, key: entry.keys[i]! } }, adaptor, upstreamModel, audience);
    if (failed) continue;
    if (await setChannelKeyStatus(app, entry.info.id, i, KEY_STATUS.enabled, '', true)) {
      healthBoard(app).reset(healthBoard(app).target(entry.info.id, i));
      app.log.info({ channel: entry.info.id, key: i }, 'channel key auto-enabled');
    }
  }
}

/**
 * Runs `each` over channel ids one after another in the background, at most one sweep of a kind
 * at a time. Closing the app stops the sweep between channels and waits for the one in flight.
 */
function backgroundSweep(
  app: AppContext,
  name: string,
  statuses: number[],
  each: (id: number) => Promise<unknown>,
  hooks?: { start(ids: number[]): Promise<void>; done(): Promise<void> },
): boolean {
  const state = app.memo(`relay:sweep:${name}`, () => {
    const st = { running: false, stopped: false, done: Promise.resolve() };
    app.onClose(async () => {
      st.stopped = true;
      await st.done;
    });
    return st;
  });
  if (state.running || state.stopped) return false;
  state.running = true;
  state.done = (async () => {
    try {
      const ids = await channelIdsByStatus(app.knex, statuses);
      await hooks?.start(ids);
      for (const id of ids) {
        if (state.stopped) break;
        try {
          await each(id);
        } catch (err) {
          app.log.warn({ err, channel: id, sweep: name }, 'channel sweep step failed');
        }
      }
    } catch (err) {
      app.log.warn({ err, sweep: name }, 'channel sweep failed');
    } finally {
      state.running = false;
      await hooks?.done().catch((err: unknown) => app.log.warn({ err, sweep: name }, 'channel sweep summary failed'));
    }
  })();
  return true;
}

/**
 * Tests every enabled (and auto-disabled) channel, one after another, in the background, under the
 * rule of whoever started the sweep (an admin's sweep skips channels root pointed at private hosts).
 */
export function testAllChannels(app: AppContext, audience: FetchAudience = 'operator'): boolean {
  // Each channel's result goes to the summary the console shows (GET /api/channel/test/summary).
  const summary = new TestSummaryRecorder(app);
  return backgroundSweep(
    app,
    'test',
    [CHANNEL_STATUS.enabled, CHANNEL_STATUS.autoDisabled],
    async (id) => {
      let r: TestResult;
      try {
        r = await testChannel(app, id, undefined, audience);
      } catch (err) {
        r = { success: false, message: localize(err, serverLang(app)), time: 0 };
      }
      await summary.add(id, r);
    },
    { start: (ids) => summary.start(ids.length), done: () => summary.done() },
  );
}

/** Model ids the upstream lists (GET /v1/models or the adaptor's equivalent). */
export async function fetchUpstreamModels(app: AppContext, channel: ChannelInfo, audience: FetchAudience = 'operator'): Promise<string[]> {
  const adaptor = adaptorFor(channel.type);
  if (!adaptor.modelsRequest || !adaptor.parseModels) throw new UpstreamError(400, msg('channel.models_unsupported'));
  const built = adaptor.modelsRequest(channel);
  const req = adaptor.authorize
    ? await adaptor.authorize(
        built,
        { channel, upstreamModel: '', requestedModel: '', stream: false, endpoint: 'chat', option: (k) => app.options.get(k) },
        app,
      )
    : built;
  const proxy = typeof channel.setting.proxy === 'string' ? channel.setting.proxy : undefined;
  const res = await guardedSend(app, req, AbortSignal.timeout(TEST_TIMEOUT_MS), audience, proxy);
  const text = (await readBody(res, 16 * 1024 * 1024)).toString('utf8');
  if (res.statusCode >= 400) throw new UpstreamError(res.statusCode, adaptor.errorMessage(res.statusCode, text), text);
  try {
    return Array.from(new Set(adaptor.parseModels(JSON.parse(text))));
  } catch {
    throw new UpstreamError(502, msg('channel.models_bad_answer'));
  }
}

export function channelInfoFrom(input: { type: number; base_url?: string; key: string; other?: string; openai_organization?: string }): ChannelInfo {
  return {
    id: 0,
    type: input.type,
    name: '',
    key:
      input.key
        .split('\n')
        .map((k) => k.trim())
        .filter(Boolean)[0] ?? '',
    baseUrl: String(input.base_url ?? '')
      .trim()
      .replace(/\/+$/, ''),
    organization: input.openai_organization ?? '',
    other: input.other ?? '',
    setting: {},
  };
}
