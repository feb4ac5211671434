/**
 * Channel balances: each kind whose provider publishes a balance endpoint has a `balance` fact in
 * the catalogue naming how it is read; the amount is stored in USD (`channels.balance`).
 *
 * - `openai-billing`: `/v1/dashboard/billing/subscription` (hard limit) minus
 *   `/v1/dashboard/billing/usage` (last 100 days, cents), else `/v1/dashboard/billing/credit_grants`
 *   (`total_available`): OpenAI's old billing API, kept by most OpenAI resellers.
 * - `deepseek`: `/user/balance` → `balance_infos[]` (the USD entry, else CNY ÷ the `Price` option).
 * - `openrouter`: `/v1/credits` → `total_credits − total_usage`.
 * - `siliconflow`: `/v1/user/info` → `data.totalBalance`.
 * - `moonshot`: `/v1/users/me/balance` → `data.available_balance` (CNY ÷ the `Price` option).
 * - `aiproxy`: `/api/report/getUserOverview` with `Api-Key` → `data.totalPoints`.
 *
 * Every lookup goes through the guarded fetch under the caller's channel rule.
 */
import type { AppContext } from '../context';
import { localize, msg, serverLang, t, type Lang, type Message } from '../i18n';
import { CHANNEL_STATUS } from '../repositories/channelStatus';
import { findChannel, recordChannelBalance } from '../repositories/channels';
import { nowSec } from '../lib/time';
import { baseUrlOf, openaiHeaders } from '../protocols/openai/adaptor';
import { channelEntry } from './routeTable';
import { UpstreamError, scrubSecrets, upstreamMessage } from '../relay/errors';
import { readBody } from '../relay/sendUpstream';
import { upstreamErrorMessage } from '../protocols/shared';
import { ChannelTargetRefused, guardedSend } from './operations';
import type { FetchAudience } from '../lib/guardedFetch';
import { channelType } from './catalogue';
import { type BalanceKind } from './kinds';
import type { ChannelInfo } from '../relay/types';

const BALANCE_TIMEOUT_MS = 30_000;
/** Channels looked up at once by "update all balances". */
const SWEEP_CONCURRENCY = 4;
const AIPROXY_REPORT_BASE = 'https://aiproxy.io';

async function getJson(
  app: AppContext,
  url: string,
  headers: Record<string, string>,
  audience: FetchAudience,
  proxy?: string,
): Promise<Record<string, unknown>> {
  const res = await guardedSend(app, { url, method: 'GET', headers }, AbortSignal.timeout(BALANCE_TIMEOUT_MS), audience, proxy);
  const text = (await readBody(res, 1024 * 1024)).toString('utf8');
  if (res.statusCode >= 400)
    throw new UpstreamError(
      res.statusCode,
      msg('balance.failed_status', { status: res.statusCode, reason: upstreamErrorMessage(res.statusCode, text).slice(0, 200) }),
    );
  try {
    const j = JSON.parse(text);
    if (j && typeof j === 'object' && !Array.isArray(j)) return j as Record<string, unknown>;
  } catch {
    /* below */
  }
  throw new UpstreamError(502, msg('balance.bad_data'));
}

const rec = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** CNY → USD at the `Price` option (yuan per dollar, the top-up price). */
function cnyToUsd(app: AppContext, cny: number): number {
  const rate = app.options.num('Price', 7.3);
  return rate > 0 ? cny / rate : cny;
}

type Reader = (get: (url: string, headers?: Record<string, string>) => Promise<Record<string, unknown>>, info: ChannelInfo, app: AppContext) => Promise<number>;

const READERS: Record<BalanceKind, Reader> = {
  async 'openai-billing'(get, info) {
    const base = baseUrlOf(info);
    try {
      const sub = await get(`${base}/v1/dashboard/billing/subscription`);
      const limit = Number(sub.hard_limit_usd ?? sub.system_hard_limit_usd ?? 0);
      const now = new Date();
      const start = new Date(now.getTime() - 99 * 86400_000).toISOString().slice(0, 10);
      const end = new Date(now.getTime() + 86400_000).toISOString().slice(0, 10);
      const usage = await get(`${base}/v1/dashboard/billing/usage?start_date=${start}&end_date=${end}`);
      return limit - Number(usage.total_usage ?? 0) / 100;
    } catch (err) {
      if (err instanceof ChannelTargetRefused) throw err;
      const grants = await get(`${base}/v1/dashboard/billing/credit_grants`);
      return Number(grants.total_available ?? grants.total_remaining ?? 0);
    }
  },
  async deepseek(get, info, app) {
    const j = await get(`${baseUrlOf(info)}/user/balance`);
    const infos = (Array.isArray(j.balance_infos) ? j.balance_infos : []).map(rec);
    const usd = infos.find((x) => x.currency === 'USD');
    if (usd) return Number(usd.total_balance ?? 0);
    const cny = infos.find((x) => x.currency === 'CNY');
    if (cny) return cnyToUsd(app, Number(cny.total_balance ?? 0));
    return Number(infos[0]?.total_balance ?? 0);
  },
  async openrouter(get, info) {
    const d = rec((await get(`${baseUrlOf(info)}/v1/credits`)).data);
    return Number(d.total_credits ?? 0) - Number(d.total_usage ?? 0);
  },
  async siliconflow(get, info) {
    return Number(rec((await get(`${baseUrlOf(info)}/v1/user/info`)).data).totalBalance ?? 0);
  },
  async moonshot(get, info, app) {
    const j = await get(`${baseUrlOf(info)}/v1/users/me/balance`);
    const d = rec(j.data);
    if (j.status === false || d.available_balance === undefined)
      throw new UpstreamError(502, msg('balance.failed', { reason: j.error || j.message ? String(j.error ?? j.message) : msg('balance.none_returned') }));
    return cnyToUsd(app, Number(d.available_balance));
  },
  async aiproxy(get, info) {
    const base = (info.baseUrl || AIPROXY_REPORT_BASE).replace(/\/+$/, '');
    const j = await get(`${base}/api/report/getUserOverview`, { 'api-key': info.key });
    if (j.success !== true) throw new UpstreamError(502, msg('balance.failed', { reason: j.message ? String(j.message) : msg('balance.none_returned') }));
    return Number(rec(j.data).totalPoints ?? 0);
  },
};

/** A kind with no balance endpoint, named by its label. */
function noBalance(type: number): Message {
  const label = channelType(type)?.label;
  return msg('balance.unsupported', { kind: label ?? msg('balance.kind_number', { type }) });
}

/** The kind can be asked for its balance. */
export function hasBalance(type: number): boolean {
  return channelType(type)?.balance !== undefined;
}

/** Reads and stores the channel's balance (USD). Throws UpstreamError with a console message. */
export async function updateChannelBalance(app: AppContext, id: number, audience: FetchAudience = 'operator'): Promise<number> {
  const row = await findChannel(app.knex, id);
  if (!row) throw new UpstreamError(404, msg('channel.not_found'));
  const entry = channelEntry(row);
  const info = entry.info;
  const kind = channelType(info.type)?.balance;
  if (!kind) throw new UpstreamError(400, noBalance(info.type));
  const proxy = typeof info.setting.proxy === 'string' ? info.setting.proxy : undefined;
  const base = openaiHeaders(info, '');
  const get = (url: string, headers?: Record<string, string>) => getJson(app, url, headers ?? base, audience, proxy);
  let balance: number;
  try {
    balance = await READERS[kind](get, info, app);
  } catch (err) {
    if (err instanceof UpstreamError)
      throw new UpstreamError(
        err.status,
        upstreamMessage(err, (m) => scrubSecrets(m, entry.keys)),
        '',
        err.upstreamCode,
      );
    throw err;
  }
  if (!Number.isFinite(balance)) throw new UpstreamError(502, msg('balance.bad_data'));
  await recordChannelBalance(app.knex, id, balance, nowSec());
  return balance;
}

/** One channel's line of the "update all balances" summary. */
export interface BalanceResult {
  id: number;
  name: string;
  type: number;
  /** `updated`: read and stored; `failed`: the lookup failed (message); `unsupported`: the kind has no balance endpoint. */
  status: 'updated' | 'failed' | 'unsupported';
  balance?: number;
  message?: string;
}

export interface BalanceSummary {
  total: number;
  updated: number;
  failed: number;
  unsupported: number;
  results: BalanceResult[];
  finishedAt: number;
}

/**
 * Updates the balance of every enabled channel (a few at a time) and answers what happened to
 * each. One sweep at a time: a second caller gets the running sweep's summary.
 */
export function updateAllBalances(app: AppContext, audience: FetchAudience = 'operator', lang: Lang = serverLang(app)): Promise<BalanceSummary> {
  const state = app.memo('channels:balanceSweep', () => ({ running: undefined as Promise<BalanceSummary> | undefined }));
  if (state.running) return state.running;
  const run = (async (): Promise<BalanceSummary> => {
    const rows = (await app.knex('channels').where('status', CHANNEL_STATUS.enabled).select('id', 'name', 'type').orderBy('id')) as Array<{
      id: number | string;
      name: string;
      type: number | string;
    }>;
    const results: BalanceResult[] = rows.map((r) => ({ id: Number(r.id), name: String(r.name ?? ''), type: Number(r.type), status: 'unsupported' }));
    let next = 0;
    const worker = async () => {
      while (next < results.length) {
        const r = results[next++]!;
        if (!hasBalance(r.type)) {
          r.message = t(lang, noBalance(r.type));
          continue;
        }
        try {
          r.balance = await updateChannelBalance(app, r.id, audience);
          r.status = 'updated';
        } catch (err) {
          r.status = 'failed';
          r.message = localize(err, lang);
          if (!(err instanceof UpstreamError)) app.log.warn({ err, channel: r.id }, 'balance update failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, results.length) }, worker));
    const count = (s: BalanceResult['status']) => results.filter((r) => r.status === s).length;
    return { total: results.length, updated: count('updated'), failed: count('failed'), unsupported: count('unsupported'), results, finishedAt: nowSec() };
  })();
  state.running = run;
  const clear = () => {
    if (state.running === run) state.running = undefined;
  };
  run.then(clear, clear);
  return run;
}
