import { RelayError, UpstreamError } from '../errors';
import { channelWay } from '../adaptors';
import { pickChannel, pickKey, type ChannelEntry } from '../routing';
import { UpstreamExchange } from '../upstreamExchange';
import { onUpstreamFailure } from '../health';
import type { AdaptorContext } from '../types';
import { isClientGone, scrubKey, type RelayCall } from './relayCall';
import { noChannel, type CallPlan } from './plan';
import type { CallMoney } from './money';
import type { Answer, RelayOutcome } from './outcome';
import { buildRequest, upstreamModelFor } from './request';
import { audioAnswer, bufferedAnswer } from './bufferedBody';
import { StreamRelay } from './streamBody';

/**
 * Tries the plan's channels (RetryTimes more after the first, by priority tier) until one
 * answers. Nothing is retried once the client got bytes or left. When none answers, the
 * reservation is refunded and the last upstream failure becomes the client's error.
 */
export async function attemptChannels(call: RelayCall, plan: CallPlan, money: CallMoney, outcome: RelayOutcome): Promise<Answer> {
  const { app } = call;
  let answer: Answer | undefined;
  const tried = new Set<number>();
  let lastErr: UpstreamError | undefined;
  let lastChannel: ChannelEntry | undefined;
  try {
    const retries = Math.max(0, Math.floor(app.options.num('RetryTimes', 0)));
    for (let attempt = 0; attempt <= retries; attempt++) {
      const ch = pickChannel(plan.tiers, attempt, tried, plan.accepts);
      if (!ch) break;
      tried.add(ch.info.id);
      outcome.channels.push(ch.info.id);
      lastChannel = ch;
      try {
        answer = await attemptChannel(call, ch, plan.calls, attempt === 0 ? money : undefined);
        break;
      } catch (err) {
        // A refusal of the reservation (nothing to refund) wins over the upstream's own failure;
        // a failure before the first request left takes the reservation now.
        await money.start();
        if (!(err instanceof UpstreamError)) throw err;
        lastErr = err;
        if (err.upstreamCode === 'client_gone') break;
        onUpstreamFailure(app, ch.info.id, ch.autoBan, err);
        app.log.warn({ channel: ch.info.id, status: err.status, msg: scrubKey(err.message, ch) }, 'upstream failed');
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
  throw new RelayError(status, scrubKey(lastErr.message, lastChannel), lastErr.upstreamCode || 'upstream_error', 'upstream_error');
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
async function attemptChannel(call: RelayCall, ch: ChannelEntry, calls: number, money: CallMoney | undefined): Promise<Answer> {
  const { app, ctx } = call;
  const way = channelWay(ch.info, call.endpoint, call.inbound.name);
  if (!way) throw noChannel(call);
  const adaptor = way.adaptor;
  const upstreamModel = upstreamModelFor(ch, call.model);
  const channel = ch.keys.length > 1 ? { ...ch.info, key: pickKey(ch) } : ch.info;
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
  const up = UpstreamExchange.open(app, req, typeof channel.setting.proxy === 'string' ? channel.setting.proxy : undefined);
  const gate = money?.start();
  // A client that hangs up stops the upstream request (and, later, its billing at what was delivered).
  const onClose = () => {
    if (!ctx.res.writableFinished) up.abort();
  };
  ctx.res.once('close', onClose);
  try {
    await up.ready;
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
      throw new UpstreamError(up.statusCode, scrubKey(adaptor.errorMessage(up.statusCode, text), ch), text);
    }
    const ctype = up.header('content-type');
    if (call.stream && (ctype.includes('text/event-stream') || (adaptor.streamSplitter && adaptor.streamSplitter(ctype)))) {
      const stream = new StreamRelay(call, ch, adaptor, actx, up, ctype, passthrough);
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
