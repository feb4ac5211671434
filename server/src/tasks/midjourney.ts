import type { AppContext } from '../context';
import { localize, msg, requestLang, t, type Message, type MessageKey } from '../i18n';
import { CHANNEL_TYPE } from '../channels/kinds';
import { AppError } from '../lib/errors';
import { fetchPolicy, guardedFetch } from '../lib/guardedFetch';
import { RelayError } from '../relay/errors';
import type { RelayHttp } from '../relay/httpContext';
import { checkModelAllowed, type Principal } from '../relay/auth';
import { findTaskRows, type TaskRecord } from '../repositories/tasks';
import { callUpstream, channelOfTask, parseJsonBody, pickTaskChannel, reply, submitTask, taskPrincipal, type Picked } from './core';
import type { PollResult, TaskPlatform } from './poller';
import type { TaskKit } from './types';

/**
 * Midjourney through a midjourney-proxy upstream (channel kinds 2 and 5), in that protocol's own
 * shape: submits answer `{code, description, result, properties}` (code 1 submitted, 21 waiting,
 * 22 duplicate: all three are accepted and billed), tasks are midjourney-proxy Task objects.
 * The upstream key goes in `mj-api-secret`. `/mj-fast`, `/mj-turbo` and `/mj-relax` prefixes
 * choose the speed and are kept on the upstream path.
 */

const MJ_KINDS = new Set<number>([CHANNEL_TYPE.Midjourney, CHANNEL_TYPE.MidjourneyPlus]);
const isMj = (type: number) => MJ_KINDS.has(type);

/** midjourney-proxy's result codes. */
const CODE = { submitted: 1, validation: 4, notFound: 3, waiting: 21, duplicate: 22, failure: 23 } as const;
const ACCEPTED = new Set<number>([CODE.submitted, CODE.waiting, CODE.duplicate]);
const STATUSES = new Set(['NOT_START', 'SUBMITTED', 'MODAL', 'IN_PROGRESS', 'FAILURE', 'SUCCESS']);

/** The action a button's customId stands for (midjourney-proxy's `/submit/action`). */
export function actionOfCustomId(customId: string): string | undefined {
  const rules: Array<[string, string]> = [
    ['MJ::JOB::upsample', 'UPSCALE'],
    ['MJ::JOB::variation::', 'VARIATION'],
    ['MJ::JOB::reroll::', 'REROLL'],
    ['MJ::JOB::low_variation::', 'LOW_VARIATION'],
    ['MJ::JOB::high_variation::', 'HIGH_VARIATION'],
    ['MJ::JOB::pan_', 'PAN'],
    ['MJ::Outpaint::', 'ZOOM'],
    ['MJ::CustomZoom::', 'CUSTOM_ZOOM'],
    ['MJ::Inpaint::', 'INPAINT'],
  ];
  for (const [prefix, action] of rules) if (customId.startsWith(prefix)) return action;
  return undefined;
}

/** The price key of an action: `mj_imagine`, `mj_upscale`… */
export const priceKey = (action: string) => `mj_${action.toLowerCase()}`;

class MjError extends AppError {
  constructor(
    status: number,
    message: MessageKey | Message,
    readonly mjCode: number = CODE.validation,
  ) {
    super(message, status, 'mj_error');
  }
}

/** A drawing row as a midjourney-proxy Task. */
export function taskDto(app: AppContext, row: TaskRecord, origin: string): Record<string, unknown> {
  const parse = (s: unknown, fallback: unknown) => {
    try {
      return typeof s === 'string' && s ? (JSON.parse(s) as unknown) : fallback;
    } catch {
      return fallback;
    }
  };
  let imageUrl = String(row.image_url ?? '');
  if (imageUrl && app.options.bool('MjForwardUrlEnabled')) {
    const base = (app.options.get('ServerAddress') || origin).replace(/\/+$/, '');
    imageUrl = `${base}/mj/image/${encodeURIComponent(String(row.mj_id))}`;
  }
  return {
    id: row.mj_id,
    action: row.action,
    customId: '',
    botType: '',
    prompt: row.prompt,
    promptEn: row.prompt_en,
    description: row.description,
    state: row.state,
    submitTime: Number(row.submit_time),
    startTime: Number(row.start_time),
    finishTime: Number(row.finish_time),
    imageUrl,
    status: row.status,
    progress: row.progress,
    failReason: row.fail_reason,
    buttons: parse(row.buttons, []),
    properties: parse(row.properties, {}),
  };
}

const origin = (ctx: RelayHttp) => {
  const host = ctx.get('host');
  return host ? `http://${host}` : '';
};

/** Client fields that are never forwarded (our own callbacks replace the upstream's), or only when an option allows. */
function cleanBody(app: AppContext, body: Record<string, unknown>): { body: Record<string, unknown>; notifyHook: string } {
  const out = { ...body };
  let notifyHook = '';
  if (typeof out.notifyHook === 'string' && out.notifyHook.trim()) {
    notifyHook = out.notifyHook.trim();
    if (!/^https?:\/\//i.test(notifyHook)) throw new MjError(400, 'task.notify_hook_http');
  }
  delete out.notifyHook;
  if (!app.options.bool('MjNotifyEnabled')) notifyHook = '';
  if (!app.options.bool('MjAccountFilterEnabled')) delete out.accountFilter;
  if (app.options.bool('MjModeClearEnabled') && typeof out.prompt === 'string') {
    out.prompt = out.prompt.replace(/\s*--(fast|relax|turbo)\b/gi, '').trim();
  }
  return { body: out, notifyHook };
}

const upstreamUrl = (picked: Picked, mode: string, rest: string) => `${picked.channel.info.baseUrl}${mode}${rest}`;
const mjHeaders = (key: string) => ({ 'content-type': 'application/json', 'mj-api-secret': key });

/** The drawing a change/action/modal refers to: the caller's own, in the state the action needs. */
async function referenced(app: AppContext, principal: Principal, taskId: unknown, needStatus?: string): Promise<TaskRecord> {
  if (typeof taskId !== 'string' || !taskId) throw new MjError(400, msg('relay.field_empty', { field: 'taskId' }));
  const [row] = await findTaskRows(app.knex, 'midjourneys', [taskId], principal.user.id);
  if (!row) throw new MjError(404, 'task.not_found', CODE.notFound);
  if (needStatus && row.status !== needStatus) throw new MjError(400, msg('task.status_not', { status: needStatus }));
  return row;
}

interface Planned {
  action: string;
  body: Record<string, unknown>;
  /** The drawing it continues (same channel). */
  ref?: TaskRecord;
}

async function planSubmit(app: AppContext, principal: Principal, kind: string, body: Record<string, unknown>): Promise<Planned> {
  const checkSuccess = app.options.bool('MjActionCheckSuccessEnabled') ? 'SUCCESS' : undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (kind) {
    case 'imagine':
      if (!str(body.prompt).trim()) throw new MjError(400, msg('relay.field_empty', { field: 'prompt' }));
      return { action: 'IMAGINE', body };
    case 'blend':
      if (!Array.isArray(body.base64Array) || body.base64Array.length < 2 || body.base64Array.length > 5) throw new MjError(400, 'task.mj_base64_array');
      return { action: 'BLEND', body };
    case 'describe':
      if (!str(body.base64)) throw new MjError(400, msg('relay.field_empty', { field: 'base64' }));
      return { action: 'DESCRIBE', body };
    case 'shorten':
      if (!str(body.prompt).trim()) throw new MjError(400, msg('relay.field_empty', { field: 'prompt' }));
      return { action: 'SHORTEN', body };
    case 'change': {
      const action = str(body.action).toUpperCase();
      if (!['UPSCALE', 'VARIATION', 'REROLL'].includes(action)) throw new MjError(400, 'task.mj_action');
      if (action !== 'REROLL' && ![1, 2, 3, 4].includes(Number(body.index))) throw new MjError(400, 'task.mj_index');
      return { action, body, ref: await referenced(app, principal, body.taskId, checkSuccess) };
    }
    case 'simple-change': {
      const m = /^\s*(\S+)\s+(U[1-4]|V[1-4]|R)\s*$/i.exec(str(body.content));
      if (!m) throw new MjError(400, 'task.mj_content');
      const op = m[2]!.toUpperCase();
      const action = op === 'R' ? 'REROLL' : op[0] === 'U' ? 'UPSCALE' : 'VARIATION';
      return { action, body, ref: await referenced(app, principal, m[1], checkSuccess) };
    }
    case 'action': {
      const action = actionOfCustomId(str(body.customId));
      if (!action) throw new MjError(400, 'task.mj_custom_id');
      return { action, body, ref: await referenced(app, principal, body.taskId, checkSuccess) };
    }
    case 'modal':
      return { action: 'MODAL', body, ref: await referenced(app, principal, body.taskId, 'MODAL') };
    default:
      throw new MjError(404, msg('task.unknown_kind', { kind }));
  }
}

/** Actions that open a Discord modal (a mask, a zoom factor) and wait for `/mj/submit/modal`. */
const OPENS_MODAL = new Set(['INPAINT', 'CUSTOM_ZOOM']);

/**
 * The status an accepted submit is recorded with. Code 21 says the task exists already: its
 * `properties.status` when the upstream gave an unfinished one (MODAL: waiting for the client's
 * modal), else MODAL for an action that opens one; the poller learns the rest.
 */
function submittedStatus(code: number, action: string, properties: unknown): string {
  if (code !== CODE.waiting) return 'SUBMITTED';
  const said = String((properties as { status?: unknown } | null | undefined)?.status ?? '').toUpperCase();
  if (STATUSES.has(said) && said !== 'SUCCESS' && said !== 'FAILURE') return said;
  return OPENS_MODAL.has(action) ? 'MODAL' : 'SUBMITTED';
}

async function submit(app: AppContext, ctx: RelayHttp, kit: TaskKit, mode: string, kind: string): Promise<void> {
  const principal = await taskPrincipal(app, ctx);
  const raw = parseJsonBody(await kit.readBody());
  const { body, notifyHook } = cleanBody(app, raw);
  if (kind === 'upload-discord-images') {
    // A synchronous helper (images uploaded for later prompts): relayed, not a task, not billed.
    const picked = await pickTaskChannel(app, principal, 'mj_imagine', isMj);
    const up = await callUpstream(
      app,
      picked.channel,
      'POST',
      upstreamUrl(picked, mode, '/mj/submit/upload-discord-images'),
      mjHeaders(picked.key),
      JSON.stringify(body),
    );
    reply(ctx, up.status, up.json() ?? { code: CODE.failure, description: t(requestLang(ctx), 'task.upstream_invalid'), result: null });
    return;
  }
  const plan = await planSubmit(app, principal, kind, body);
  const model = priceKey(plan.action);
  let picked: Picked;
  if (plan.ref) {
    // Continued on the drawing's own channel (the upstream account holds it); the key's model limits still apply.
    checkModelAllowed(principal, model);
    const p = await channelOfTask(app, plan.ref);
    if (!p) throw new MjError(400, 'task.origin_channel_deleted');
    picked = p;
  } else picked = await pickTaskChannel(app, principal, model, isMj);
  const result = await submitTask(app, {
    table: 'midjourneys',
    model,
    units: 1,
    prompts: [typeof plan.body.prompt === 'string' ? plan.body.prompt : ''],
    principal,
    picked,
    ip: kit.ip,
    pollMs: kit.pollMs,
    continues: plan.action === 'MODAL' ? plan.ref : undefined,
    send: async () => {
      const up = await callUpstream(
        app,
        picked.channel,
        'POST',
        upstreamUrl(picked, mode, `/mj/submit/${kind}`),
        mjHeaders(picked.key),
        JSON.stringify(plan.body),
      );
      const j = up.json() as { code?: unknown; description?: unknown; result?: unknown; properties?: unknown } | undefined;
      if (up.status >= 300 || !j || typeof j !== 'object') {
        return {
          answer: {
            status: up.status >= 300 ? up.status : 502,
            body: { code: CODE.failure, description: t(requestLang(ctx), 'task.upstream_status', { status: up.status }), result: null, properties: {} },
          },
        };
      }
      const code = Number(j.code);
      const id = typeof j.result === 'string' || typeof j.result === 'number' ? String(j.result) : '';
      const answer = { status: 200, body: { code, description: String(j.description ?? ''), result: j.result ?? null, properties: j.properties ?? {} } };
      if (!ACCEPTED.has(code) || !id) return { answer };
      const now = Date.now();
      const prompt = typeof raw.prompt === 'string' ? raw.prompt : '';
      const common = {
        code,
        description: String(j.description ?? ''),
        status: submittedStatus(code, plan.action, j.properties),
        progress: '0%',
        properties: JSON.stringify(j.properties ?? {}),
      };
      return {
        answer,
        accepted: {
          upstreamId: id,
          // The modal confirmed the waiting drawing and the upstream goes on with the same task:
          // its row is taken up again (core.ts `continues`), keeping its action and submit time.
          continuation: { ...common, ...(prompt ? { prompt } : {}), ...(notifyHook ? { notify_hook: notifyHook } : {}), finish_time: 0 },
          row: {
            ...common,
            action: plan.action,
            mj_id: id,
            prompt,
            state: typeof raw.state === 'string' ? raw.state : '',
            submit_time: now,
            notify_hook: notifyHook,
            created_at: Math.floor(now / 1000),
          },
        },
      };
    },
  });
  reply(ctx, result.answer.status, result.answer.body);
}

async function fetchOne(app: AppContext, ctx: RelayHttp, id: string): Promise<void> {
  const principal = await taskPrincipal(app, ctx);
  const [row] = await findTaskRows(app.knex, 'midjourneys', [id], principal.user.id);
  if (!row) throw new MjError(404, 'task.not_found', CODE.notFound);
  reply(ctx, 200, taskDto(app, row, origin(ctx)));
}

async function listByCondition(app: AppContext, ctx: RelayHttp, kit: TaskKit): Promise<void> {
  const principal = await taskPrincipal(app, ctx);
  const body = parseJsonBody(await kit.readBody());
  const ids = Array.isArray(body.ids) ? body.ids.filter((x): x is string => typeof x === 'string').slice(0, 1000) : [];
  if (!ids.length) return reply(ctx, 200, []);
  const rows = await findTaskRows(app.knex, 'midjourneys', ids, principal.user.id);
  reply(
    ctx,
    200,
    rows.map((r) => taskDto(app, r, origin(ctx))),
  );
}

/** The image of a drawing through this gateway (MjForwardUrlEnabled hides the upstream's image host). */
async function image(app: AppContext, ctx: RelayHttp, id: string): Promise<void> {
  const [row] = await findTaskRows(app.knex, 'midjourneys', [id], undefined);
  const url = row ? String(row.image_url ?? '') : '';
  if (!url) throw new MjError(404, 'task.image_not_found', CODE.notFound);
  // The URL came from the operator's upstream, not from a client.
  const res = await guardedFetch(app, url, { maxBytes: 32 * 1024 * 1024, timeoutMs: 30_000, policy: fetchPolicy(app, 'operator') });
  if (res.status !== 200) throw new MjError(502, msg('task.image_fetch_failed', { status: res.status }), CODE.failure);
  const ct = res.headers['content-type'];
  ctx.set('content-type', (Array.isArray(ct) ? ct[0] : ct) || 'image/png');
  ctx.set('cache-control', 'public, max-age=86400');
  reply(ctx, 200, res.body);
}

/** `/mj…` routes; errors answered in midjourney-proxy's shape. */
export async function handleMidjourney(app: AppContext, ctx: RelayHttp, kit: TaskKit): Promise<void> {
  const m = /^(\/mj-(?:fast|turbo|relax))?\/mj\/(.+)$/.exec(ctx.path);
  try {
    if (!m) throw new MjError(404, msg('relay.invalid_url', { method: ctx.method, path: ctx.path }));
    const mode = m[1] ?? '';
    const rest = m[2]!;
    let sub: RegExpExecArray | null;
    if (ctx.method === 'POST' && (sub = /^submit\/([a-z-]+)$/.exec(rest))) return await submit(app, ctx, kit, mode, sub[1]!);
    if (ctx.method === 'GET' && (sub = /^task\/([^/]+)\/fetch$/.exec(rest))) return await fetchOne(app, ctx, decodeURIComponent(sub[1]!));
    if (ctx.method === 'POST' && rest === 'task/list-by-condition') return await listByCondition(app, ctx, kit);
    if (ctx.method === 'GET' && (sub = /^image\/([^/]+)$/.exec(rest))) return await image(app, ctx, decodeURIComponent(sub[1]!));
    throw new MjError(404, msg('relay.invalid_url', { method: ctx.method, path: ctx.path }));
  } catch (err) {
    if (!(err instanceof AppError)) app.log.error({ err, path: ctx.path }, 'midjourney route failed');
    const status = err instanceof AppError ? err.status : 500;
    const code = err instanceof MjError ? err.mjCode : status >= 500 ? CODE.failure : CODE.validation;
    const message = err instanceof AppError ? localize(err, requestLang(ctx)) : t(requestLang(ctx), 'common.internal_error_short');
    const type = err instanceof RelayError ? err.code : undefined;
    reply(ctx, status, { code, description: message, result: null, properties: {}, ...(type ? { type } : {}) });
  }
}

/** Upstream task → what the poller writes. */
function pollResult(t: Record<string, unknown>): PollResult {
  let status = String(t.status ?? '').toUpperCase();
  if (status === 'CANCEL') status = 'FAILURE';
  if (!STATUSES.has(status)) status = 'IN_PROGRESS';
  const num = (v: unknown) => (Number.isFinite(Number(v)) ? Number(v) : 0);
  const patch: Record<string, unknown> = {
    image_url: typeof t.imageUrl === 'string' ? t.imageUrl : '',
    prompt_en: typeof t.promptEn === 'string' ? t.promptEn : '',
    start_time: num(t.startTime),
    buttons: JSON.stringify(Array.isArray(t.buttons) ? t.buttons : []),
    properties: JSON.stringify(t.properties && typeof t.properties === 'object' ? t.properties : {}),
  };
  if (typeof t.description === 'string' && t.description) patch.description = t.description;
  if (num(t.finishTime)) patch.finish_time = num(t.finishTime);
  // DESCRIBE answers its prompts in `prompt` (midjourney-proxy puts them there).
  if (typeof t.prompt === 'string' && t.prompt && t.action === 'DESCRIBE') patch.prompt = t.prompt;
  return {
    status,
    progress: typeof t.progress === 'string' && t.progress ? t.progress : status === 'SUCCESS' ? '100%' : '0%',
    failReason: typeof t.failReason === 'string' ? t.failReason : undefined,
    stop: status === 'MODAL',
    patch,
  };
}

export const midjourneyPlatform: TaskPlatform = {
  name: 'midjourney',
  table: 'midjourneys',
  owns: () => true,
  async poll(app, picked, rows) {
    const ids = rows.map((r) => String(r.mj_id));
    const up = await callUpstream(
      app,
      picked.channel,
      'POST',
      `${picked.channel.info.baseUrl}/mj/task/list-by-condition`,
      mjHeaders(picked.key),
      JSON.stringify({ ids }),
      30_000,
    );
    if (up.status !== 200) throw new Error(`midjourney list-by-condition ${up.status}`);
    const list = up.json();
    if (!Array.isArray(list)) throw new Error('midjourney list-by-condition: not a list');
    const byId = new Map<string, Record<string, unknown>>();
    for (const t of list) if (t && typeof t === 'object') byId.set(String((t as { id?: unknown }).id), t as Record<string, unknown>);
    const out = new Map<number, PollResult>();
    for (const r of rows) {
      const t = byId.get(String(r.mj_id));
      if (t) out.set(r.id, pollResult(t));
    }
    return out;
  },
  changed(app, row) {
    const hook = String(row.notify_hook ?? '');
    if (!hook || !app.options.bool('MjNotifyEnabled')) return;
    // The client's URL: the guarded fetch (user policy) refuses private addresses and the like.
    void guardedFetch(app, hook, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(taskDto(app, row, '')),
      timeoutMs: 10_000,
      maxRedirects: 0,
      policy: fetchPolicy(app, 'user'),
    }).catch((err: unknown) => app.log.info({ err: String(err), task: row.mj_id }, 'midjourney notifyHook failed'));
  },
  finishPatch: (nowMs) => ({ finish_time: nowMs }),
};
