import { request } from 'undici';
import { msg, serverLang, t } from '../i18n';
import type { AppContext } from '../context';
import { authenticateKey, checkModelAllowed, type Principal } from '../relay/auth';
import { extractKey } from '../relay/keys';
import { RelayError } from '../relay/errors';
import type { RelayHttp } from '../relay/httpContext';
import { channelEntry, pickChannel, pickKeyIndex, routeTable, tiersFor, type ChannelEntry } from '../channels/routeTable';
import { healthBoard } from '../channels/healthBoard';
import { upstreamDispatcher } from '../relay/upstream';
import { priceFor, type PriceInfo } from '../services/billing';
import { checkPromptSensitive } from '../services/sensitive';
import { checkModelRateLimit } from '../services/modelRateLimit';
import { Reservation } from '../ledger/reservation';
import { refund, type Payer } from '../ledger/balances';
import { usageBatcher } from '../ledger/usage';
import { LOG_TYPE } from '../repositories/logs';
import {
  channelRowById,
  continueTaskRow,
  insertTaskRow,
  markTaskRefundable,
  markTaskRefunded,
  tokenIsLimited,
  upstreamIdColumn,
  type TaskRecord,
  type TaskTable,
} from '../repositories/tasks';
import type { ChannelRow } from '../repositories/channels';
import { nowSec } from '../lib/time';

/**
 * The asynchronous task framework (docs/tasks.md): a task is submitted on a channel of the right
 * kind, paid from the caller's balance when the upstream accepts it (a quota reservation opened
 * before the submit, settled on accept, given back on refusal: ledger/reservation.ts), recorded
 * with its channel, then followed by the poller (poller.ts). A task that fails refunds what it
 * took, once (refundFailedTask).
 */

/** Terminal statuses (the task log's SUCCESS / FAILURE). */
export const DONE = new Set(['SUCCESS', 'FAILURE']);

/** Per-call price of one action (`mj_imagine`, `suno_music`…) or per second of a video model, in quota. */
export function unitQuota(app: AppContext, price: PriceInfo): number {
  // A fixed price is USD per call (or per second); a ratio-priced action costs ratio × 1000 quota
  // per unit (1 ≈ $0.002 at the default QuotaPerUnit), one-api's convention for per-call models.
  if (price.usePrice) return price.modelPrice * price.groupRatio * app.options.quotaPerUnit;
  return price.modelRatio * price.groupRatio * 1000;
}

/** The caller of a task route: the relay key (Authorization, or `mj-api-secret` for Midjourney clients). */
export async function taskPrincipal(app: AppContext, ctx: RelayHttp): Promise<Principal> {
  let key = extractKey(ctx, 'openai');
  if (!key) {
    const mj = ctx.get('mj-api-secret').trim();
    key = mj.startsWith('sk-') ? mj.slice(3) : mj;
  }
  return authenticateKey(app, key, ctx.ip || ctx.req.socket.remoteAddress || '');
}

export interface Picked {
  channel: ChannelEntry;
  keyIndex: number;
  key: string;
}

/** A channel of the caller's group serving `model` whose kind `accept`s it (priority, then weight). */
export async function pickTaskChannel(app: AppContext, principal: Principal, model: string, accept: (type: number) => boolean): Promise<Picked> {
  checkModelAllowed(principal, model);
  const table = await routeTable(app);
  let channel: ChannelEntry | undefined;
  if (principal.pinnedChannel) {
    channel = table.channels.get(principal.pinnedChannel);
    if (channel && !accept(channel.info.type)) channel = undefined;
  } else {
    const tiers = tiersFor(table, principal.group, model);
    channel = tiers && pickChannel(tiers, 0, new Set(), (c) => accept(c.info.type));
  }
  if (!channel) throw new RelayError(503, msg('task.no_channel', { group: principal.group, model }), 'model_not_found');
  // One of the enabled keys (a disabled key is never sent), in the channel's order; a key whose
  // breaker is open only when no other is left. The route table holds only channels with an
  // enabled key, so the second pick always finds one.
  let keyIndex = pickKeyIndex(channel, { board: healthBoard(app), now: Date.now() });
  if (keyIndex < 0) keyIndex = pickKeyIndex(channel);
  return { channel, keyIndex, key: channel.keys[keyIndex]! };
}

/** The channel and key a stored task was accepted on (any status: a disabled channel still answers for its tasks). */
export async function channelOfTask(app: AppContext, row: TaskRecord): Promise<Picked | undefined> {
  const table = await routeTable(app);
  let channel = table.channels.get(Number(row.channel_id));
  if (!channel) {
    const r = await channelRowById(app.knex, Number(row.channel_id));
    if (!r) return undefined;
    channel = channelEntry(r as unknown as ChannelRow);
  }
  const keyIndex = Math.min(Number(row.key_index ?? 0), Math.max(0, channel.keys.length - 1));
  return { channel, keyIndex, key: channel.keys[keyIndex] ?? '' };
}

export interface UpstreamAnswer {
  status: number;
  body: Buffer;
  contentType: string;
  json(): unknown;
}

/** One request to a channel (its proxy setting honoured); network errors and timeouts reject. */
export async function callUpstream(
  app: AppContext,
  channel: ChannelEntry,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  timeoutMs = app.config.upstreamTimeoutMs || 60_000,
): Promise<UpstreamAnswer> {
  const proxy = typeof channel.info.setting.proxy === 'string' ? channel.info.setting.proxy : undefined;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method,
      headers,
      body,
      dispatcher: upstreamDispatcher(app, proxy),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    // Connection refused, timeout, bad URL: a 502 in the caller's format (the key never in the message).
    app.log.warn({ err: String(err), channel: channel.info.id }, 'task upstream request failed');
    throw new RelayError(502, 'task.upstream_failed', 'upstream_error');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res.body) {
    size += (c as Buffer).length;
    if (size > 64 * 1024 * 1024) {
      res.body.destroy();
      throw new Error('upstream answer too large');
    }
    chunks.push(c as Buffer);
  }
  const buf = Buffer.concat(chunks);
  const ct = res.headers['content-type'];
  return {
    status: res.statusCode,
    body: buf,
    contentType: (Array.isArray(ct) ? ct[0] : ct) ?? '',
    json() {
      try {
        return JSON.parse(buf.toString('utf8')) as unknown;
      } catch {
        return undefined;
      }
    },
  };
}

export interface SubmitOutcome<T> {
  /** The upstream took the task: its id (recorded, then polled). */
  accepted?: {
    upstreamId: string;
    row: Record<string, unknown>;
    /** The columns to write instead when this submit continues `SubmitSpec.continues` (same upstream id). */
    continuation?: Record<string, unknown>;
  };
  /** What the client gets back (accepted or not). */
  answer: T;
}

export interface SubmitSpec<T> {
  table: TaskTable;
  /** The price key (`mj_imagine`, `suno_music`, a video model). */
  model: string;
  /** Units billed at the price: 1 per call, seconds for videos. */
  units: number;
  /** The client's prompt texts (the sensitive-word check, when on). */
  prompts: string[];
  principal: Principal;
  picked: Picked;
  ip: string;
  /** Sends the task upstream; says whether it was accepted. Throwing counts as refused. */
  send(): Promise<SubmitOutcome<T>>;
  pollMs: number;
  /**
   * A task this submit may continue (a Midjourney modal confirming a drawing waiting in MODAL):
   * when the upstream answers that task's own id, its row is taken up again (status, polling,
   * quota added) instead of a second row being written for one upstream task.
   */
  continues?: TaskRecord;
}

/**
 * Submits a task and bills it: the price is reserved first (403 when the balance does not cover
 * it, nothing sent), kept when the upstream accepts (a consume log row and the usage counters,
 * as a relayed call) and given back when it refuses. The task row is written before the money is
 * settled, marked refundable only once it is: a crash in between leaves an open reservation,
 * which start-up recovery refunds, and a task that is never refunded again.
 */
export async function submitTask<T>(app: AppContext, spec: SubmitSpec<T>): Promise<{ answer: T; id?: number; quota: number }> {
  const { principal, picked } = spec;
  // The relay's checks before any money moves: prompt words, the per-user request rate.
  checkPromptSensitive(app, spec.prompts);
  const ticket = app.options.bool('ModelRequestRateLimitEnabled') ? await checkModelRateLimit(app, principal.user.id) : undefined;
  const acceptUnset = principal.user.setting.accept_unset_model_ratio_model === true;
  const price = priceFor(app, spec.model, principal.group, acceptUnset);
  const quota = Math.max(0, Math.round(unitQuota(app, price) * spec.units));
  const payer: Payer = { userId: principal.user.id, limitedTokenId: principal.token && !principal.token.unlimited ? principal.token.id : undefined };
  const res = new Reservation(app, payer, quota, { tokenId: principal.token?.id ?? 0, model: spec.model, group: principal.group, stream: false });
  await res.open();
  let outcome: SubmitOutcome<T>;
  try {
    outcome = await spec.send();
  } catch (err) {
    await res.refund();
    throw err;
  }
  if (!outcome.accepted) {
    await res.refund();
    return { answer: outcome.answer, quota: 0 };
  }
  const now = Date.now();
  let id: number | undefined;
  try {
    const cont = spec.continues;
    const patch = outcome.accepted.continuation;
    if (cont && patch && String(cont[upstreamIdColumn(spec.table)]) === outcome.accepted.upstreamId) {
      // Not refundable until the new money settles (as a new row): a crash in between leaves the
      // open reservation to recovery, and the task is not refunded a second time. Lost to a
      // concurrent modal: a row of its own, as any accepted submit.
      const taken = await continueTaskRow(app.knex, spec.table, cont.id, {
        ...patch,
        refunded: 1,
        active: 1,
        next_poll_at: now + Math.min(spec.pollMs, 5000),
        quota,
      });
      if (taken) id = cont.id;
    }
  } catch (err) {
    await res.refund();
    throw err;
  }
  try {
    id ??= await insertTaskRow(app.knex, spec.table, {
      ...outcome.accepted.row,
      user_id: principal.user.id,
      token_id: principal.token?.id ?? 0,
      group: principal.group,
      channel_id: picked.channel.info.id,
      key_index: picked.keyIndex,
      model_name: spec.model,
      quota,
      // Not refundable until paid: a crash before the settle leaves an open reservation that
      // start-up recovery gives back, and the task must not be refunded a second time.
      refunded: 1,
      active: 1,
      // The first look soon (a few seconds), not a whole period later.
      next_poll_at: now + Math.min(spec.pollMs, 5000),
    });
  } catch (err) {
    await res.refund();
    throw err;
  }
  const s = await res.settle(quota, picked.channel.info.id, 0, 0);
  await markTaskRefundable(app.knex, spec.table, id);
  if (ticket) void ticket.success().catch(() => undefined);
  const batcher = usageBatcher(app);
  const resId = res.handOver();
  if (resId !== undefined) batcher.closeReservation(resId);
  batcher.addUsage(principal.user.id, principal.token?.id, picked.channel.info.id, s.taken);
  if (app.options.bool('LogConsumeEnabled')) {
    batcher.addLog({
      user_id: principal.user.id,
      type: LOG_TYPE.consume,
      username: principal.user.username,
      token_name: principal.tokenName,
      token_id: principal.token?.id ?? 0,
      model_name: spec.model,
      quota: s.taken,
      channel_id: picked.channel.info.id,
      channel_name: picked.channel.info.name,
      group: principal.group,
      ip: spec.ip,
      content: price.usePrice
        ? t(serverLang(app), 'log.price', { price: price.modelPrice, group: price.groupRatio })
        : t(serverLang(app), 'log.task_ratios', { model: price.modelRatio, group: price.groupRatio }),
      other: JSON.stringify({
        model_price: price.usePrice ? price.modelPrice : -1,
        model_ratio: price.modelRatio,
        group_ratio: price.groupRatio,
        task_id: outcome.accepted.upstreamId,
        units: spec.units,
        group: principal.group,
        admin_info: { use_channel: [picked.channel.info.id] },
      }),
    });
  }
  return { answer: outcome.answer, id, quota };
}

/**
 * Gives a failed task's quota back, exactly once across nodes and retries: the conditional update
 * of `refunded` picks the one caller that moves the money and writes the log row.
 */
export async function refundFailedTask(app: AppContext, table: TaskTable, row: TaskRecord, upstreamId: string, reason: string): Promise<boolean> {
  const quota = Number(row.quota ?? 0);
  if (quota <= 0) return false;
  if (!(await markTaskRefunded(app.knex, table, row.id))) return false;
  const tokenId = Number(row.token_id ?? 0);
  const payer: Payer = { userId: Number(row.user_id), limitedTokenId: (await tokenIsLimited(app.knex, tokenId)) ? tokenId : undefined };
  await refund(app, payer, quota);
  usageBatcher(app).addLog({
    user_id: Number(row.user_id),
    type: LOG_TYPE.system,
    token_id: tokenId,
    model_name: String(row.model_name ?? ''),
    quota,
    channel_id: Number(row.channel_id),
    group: String(row.group ?? ''),
    created_at: nowSec(),
    content: t(serverLang(app), 'log.task_refund', { id: upstreamId, quota, reason: reason.slice(0, 200) }),
    other: JSON.stringify({ task_id: upstreamId, refund: quota }),
  });
  return true;
}

/** JSON answer helper of task routes. */
export function reply(ctx: RelayHttp, status: number, body: unknown): void {
  ctx.status = status;
  ctx.body = body;
}

/** The JSON body of a task route (400 in the route's error shape otherwise). */
export function parseJsonBody(raw: Buffer): Record<string, unknown> {
  if (!raw.length) throw new RelayError(400, 'body.empty', 'invalid_request');
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new RelayError(400, 'body.bad_json', 'invalid_request');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new RelayError(400, 'body.not_object', 'invalid_request');
  return body as Record<string, unknown>;
}
