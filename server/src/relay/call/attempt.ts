import { RelayError, UpstreamError, upstreamMessage } from '../errors';
import { localize, msg, serverLang, type Lang } from '../../i18n';
import { channelWay } from '../../channels/providers';
import { pickChannel, pickKeyIndex, type ChannelEntry, type PickState } from '../../channels/routeTable';
import { UpstreamExchange } from '../upstreamExchange';
import { onUpstreamFailure } from '../../channels/health';
import { failureKind, healthBoard, retryAfterMs, type HealthBoard } from '../../channels/healthBoard';
import type { AdaptorContext } from '../types';
import { isClientGone, scrubKey, type RelayCall } from './relayCall';
import { noChannel, type CallPlan } from './plan';
import type { CallMoney } from './money';
import type { Answer, RelayOutcome } from './outcome';
import { buildRequest, upstreamModelFor } from './request';
import { audioAnswer, bufferedAnswer } from './bufferedBody';
import { StreamRelay, streamParts, type StreamParts } from './streamBody';

/**
 * Tries the plan's channels (RetryTimes more after the first, by priority tier) until one
 * answers. Nothing is retried once the client got bytes or left. When none answers, the
 * reservation is refunded and the last upstream failure becomes the client's error.
 */
export async function attemptChannels(call: RelayCall, plan: CallPlan, money: CallMoney, outcome: RelayOutcome): Promise<Answer> {
  const { app } = call;
  const board = healthBoard(app);
  let answer: Answer | undefined;
  /** Channels attempted; `spent`: those not to use again even with another key. */
  const tried = new Set<number>();
  const spent = new Set<number>();
  const triedKeys = new Set<string>();
  let lastErr: UpstreamError | undefined;
  let lastChannel: ChannelEntry | undefined;
  try {
    const retries = Math.max(0, Math.floor(app.options.num('RetryTimes', 0)));
    for (let attempt = 0; attempt <= retries; attempt++) {
      const now = Date.now();
      const st: Omit<PickState, 'tried'> = { triedKeys, board, now };
      // Another channel first; another key of a multi-key channel already tried when none is left.
      const ch =
        pickChannel(plan.tiers, attempt, tried, plan.accepts, st) ??
        (tried.size > spent.size ? pickChannel(plan.tiers, attempt, spent, plan.accepts, st) : undefined);
      if (!ch) {
        if (attempt === 0) throw coolingDown(call);
        break;
      }
      const keyIndex = pickKeyIndex(ch, st);
      if (keyIndex < 0) break;
      const id = ch.info.id;
      if (attempt > 0) board.retries++;
      tried.add(id);
      if (ch.multiKey) triedKeys.add(`${id}:${keyIndex}`);
      else spent.add(id);
      outcome.channels.push(id);
      lastChannel = ch;
      const keyHealth = ch.keyHealth?.[keyIndex];
      if (ch.health) board.claim(ch.health, now);
      if (keyHealth) board.claim(keyHealth, now);
      const timing = { ttfb: 0 };
      try {
        answer = await attemptChannel(call, ch, keyIndex, timing, plan.calls, attempt === 0 ? money : undefined);
        const end = Date.now();
        if (ch.health) board.success(ch.health, timing.ttfb, end);
        if (keyHealth) board.success(keyHealth, timing.ttfb, end);
        outcome.keyIndex = ch.multiKey ? keyIndex : -1;
        break;
      } catch (err) {
        if (!(err instanceof UpstreamError) || err.upstreamCode === 'client_gone') {
          // Not the target's doing: a probe it carried may go again.
          if (ch.health) board.release(ch.health);
          if (keyHealth) board.release(keyHealth);
        }
        // A refusal of the reservation (nothing to refund) wins over the upstream's own failure;
        // a failure before the first request left takes the reservation now.
        await money.start();
        if (!(err instanceof UpstreamError)) throw err;
        lastErr = err;
        if (err.upstreamCode === 'client_gone') break;
        if (noteFailure(board, ch, keyIndex, err, timing.ttfb, serverLang(app)) === 'channel') spent.add(id);
        onUpstreamFailure(app, ch, keyIndex, err);
        app.log.warn({ channel: id, key: ch.multiKey ? keyIndex : undefined, status: err.status, msg: scrubKey(err.message, ch) }, 'upstream failed');
        if (!err.retryable || isClientGone(call.ctx)) break;
      }
    }
    await money.start(); // settled before anything is billed, retried or refunded
  } catch (err) {
    await money.abandon();
    throw err;
  }
  if (answer) return answer;
  await money.refund();
  outcome.channelId = lastChannel?.info.id ?? 0;
  if (!lastErr) throw noChannel(call);
  const status = mapStatus(lastChannel, lastErr.status || 502);
  throw new RelayError(
    status,
    upstreamMessage(lastErr, (m) => scrubKey(m, lastChannel)),
    lastErr.upstreamCode || 'upstream_error',
    'upstream_error',
  );
}

/**
 * Feeds a failure to the breakers: on a multi-key channel an auth or rate-limit failure is the
 * key's (another key may work), anything else the channel's. A failure that does not count (the
 * caller's error, e.g. 400) shows the upstream is up: it counts as an answer. Returns whose it was.
 */
function noteFailure(board: HealthBoard, ch: ChannelEntry, keyIndex: number, err: UpstreamError, ttfb: number, lang: Lang): 'channel' | 'key' | undefined {
  const now = Date.now();
  const kind = failureKind(err.status);
  const keyHealth = ch.keyHealth?.[keyIndex];
  if (!kind) {
    if (ch.health) board.success(ch.health, ttfb, now);
    if (keyHealth) board.success(keyHealth, ttfb, now);
    return undefined;
  }
  // Stored on the health board (shown on the channel health page): our own wording in the server's language.
  const reason = `${err.status ? `${err.status} ` : ''}${scrubKey(localize(err, lang), ch)}`;
  if (keyHealth && (kind === 'auth' || kind === 'rate_limit')) {
    board.failure(keyHealth, kind, now, reason, err.retryAfterMs);
    // The channel's error rate still sees it (health score); its breaker does not.
    if (ch.health) board.noteError(ch.health, now, reason);
    return 'key';
  }
  if (ch.health) board.failure(ch.health, kind, now, reason, err.retryAfterMs);
  if (keyHealth) board.release(keyHealth);
  return 'channel';
}

/** Every channel that could take the call is resting (breaker open): 503, try again shortly. */
function coolingDown(call: RelayCall): RelayError {
  return new RelayError(503, msg('relay.cooling_down', { group: call.principal.group, model: call.model }), 'channels_cooling_down');
}

/** The channel's status_code_mapping applied to an upstream status. */
function mapStatus(ch: ChannelEntry | undefined, status: number): number {
  const m = ch?.statusCodeMapping?.[String(status)];
  const n = m === undefined ? NaN : Number(m);
  return Number.isInteger(n) && n >= 100 && n <= 599 ? n : status;
}

/**
 * Tries one channel: builds the request, sends it, reads the answer (relaying a stream as it
 * comes). Throws UpstreamError only while nothing has been sent to the client. `money` (first
 * attempt only) starts the early reservation commit once the request is on its way; its answer is
 * awaited before the upstream's is used.
 */
async function attemptChannel(
  call: RelayCall,
  ch: ChannelEntry,
  keyIndex: number,
  timing: { ttfb: number },
  calls: number,
  money: CallMoney | undefined,
): Promise<Answer> {
  const { app, ctx } = call;
  const way = channelWay(ch.info, call.endpoint, call.inbound.name);
  if (!way) throw noChannel(call);
  const adaptor = way.adaptor;
  const upstreamModel = upstreamModelFor(ch, call.model);
  const channel = ch.multiKey ? { ...ch.info, key: ch.keys[keyIndex]! } : ch.info;
  const actx: AdaptorContext = {
    channel,
    upstreamModel,
    requestedModel: call.model,
    stream: call.stream,
    endpoint: call.endpoint,
    option: (k) => app.options.get(k),
    clientHeader: (k) => ctx.get(k),
    paramOverride: ch.paramOverride,
  };
  const built = buildRequest(call, way, ch, actx);
  const passthrough = way.mode === 'passthrough';
  call.upstreamFormat = adaptor.format;
  call.passthrough = passthrough;
  const req = adaptor.authorize ? await adaptor.authorize(built, actx, app) : built;

  call.timer.upstreamStart();
  const sent = performance.now();
  const up = UpstreamExchange.open(app, req, typeof channel.setting.proxy === 'string' ? channel.setting.proxy : undefined);
  const gate = money?.start();
  // A client that hangs up stops the upstream request (and, later, its billing at what was delivered).
  const onClose = () => {
    if (!ctx.res.writableFinished) up.abort();
  };
  ctx.res.once('close', onClose);
  // A stream's parts are made while the upstream works on the request. undici writes a request on
  // a reused connection from a setImmediate (see money.ts): queued after it, they do not delay it.
  let parts: StreamParts | undefined;
  const makeParts = () => (parts ??= streamParts(call, adaptor, actx, passthrough));
  if (call.stream)
    setImmediate(() => {
      try {
        makeParts();
      } catch {
        /* made again, and thrown in the call's own flow, when the stream starts */
      }
    });
  try {
    await up.ready;
    timing.ttfb = performance.now() - sent;
    if (gate) {
      // Nothing of this answer is used before the reservation is known to be taken.
      try {
        await gate;
      } catch (err) {
        up.abort();
        throw err;
      }
    }
    if (up.statusCode >= 400) {
      let text = '';
      try {
        text = (await up.collect(1024 * 1024)).toString('utf8');
      } catch {
        /* keep the status */
      }
      const e = new UpstreamError(up.statusCode, scrubKey(adaptor.errorMessage(up.statusCode, text), ch), text);
      if (up.statusCode === 429 || up.statusCode === 503) e.retryAfterMs = retryAfterMs(up.header('retry-after'));
      throw e;
    }
    const ctype = up.header('content-type');
    if (call.stream && (ctype.includes('text/event-stream') || (adaptor.streamSplitter && adaptor.streamSplitter(ctype)))) {
      const stream = new StreamRelay(call, ch, adaptor, actx, up, ctype, makeParts());
      await stream.run();
      return stream;
    }
    if (call.endpoint === 'speech') return audioAnswer(call, ch, upstreamModel, up, ctype, calls);
    return await bufferedAnswer(call, ch, adaptor, actx, up, way.mode, calls, ctype);
  } catch (err) {
    call.timer.upstreamEnd();
    throw err;
  } finally {
    ctx.res.off('close', onClose);
  }
}
