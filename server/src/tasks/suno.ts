import type { AppContext } from '../context';
import { localize, msg, requestLang, t, type Message, type MessageKey } from '../i18n';
import { CHANNEL_TYPE } from '../channels/kinds';
import { AppError } from '../lib/errors';
import type { RelayHttp } from '../relay/httpContext';
import { findTaskRows, type TaskRecord } from '../repositories/tasks';
import { callUpstream, parseJsonBody, pickTaskChannel, reply, submitTask, taskPrincipal } from './core';
import type { PollResult, TaskPlatform } from './poller';
import type { TaskKit } from './types';
import { own } from '../lib/own';

/**
 * Suno (channel kind 36) in the Suno API shape new-api's clients call: every answer is
 * `{code, message, data}` (`code` "success" or an error code). Submits answer the task id in
 * `data`; fetches answer task objects `{task_id, action, status, fail_reason, submit_time,
 * start_time, finish_time, progress, data}`, `data` being the upstream's clips (MUSIC) or lyrics
 * (LYRICS). The upstream speaks the same protocol with `Authorization: Bearer <key>`.
 */

const PLATFORM = 'suno';
const isSuno = (type: number) => type === CHANNEL_TYPE.Suno;
const STATUSES = new Set(['NOT_START', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'FAILURE', 'SUCCESS', 'UNKNOWN']);
const ACTIONS: Record<string, { action: string; model: string }> = {
  music: { action: 'MUSIC', model: 'suno_music' },
  lyrics: { action: 'LYRICS', model: 'suno_lyrics' },
};

class SunoError extends AppError {
  constructor(status: number, message: MessageKey | Message, code: string) {
    super(message, status, code);
  }
}

const parse = (s: unknown): unknown => {
  try {
    return typeof s === 'string' && s ? (JSON.parse(s) as unknown) : null;
  } catch {
    return null;
  }
};

/** A task row in the Suno API's task shape. */
export function sunoDto(row: TaskRecord): Record<string, unknown> {
  return {
    task_id: row.task_id,
    action: row.action,
    status: row.status,
    fail_reason: row.fail_reason,
    submit_time: Number(row.submit_time),
    start_time: Number(row.start_time),
    finish_time: Number(row.finish_time),
    progress: row.progress,
    data: parse(row.data),
  };
}

const ok = (data: unknown) => ({ code: 'success', message: '', data });
const bearer = (key: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });

async function submit(app: AppContext, ctx: RelayHttp, kit: TaskKit, kind: string): Promise<void> {
  const what = own(ACTIONS, kind);
  if (!what) throw new SunoError(404, msg('task.unknown_kind', { kind }), 'invalid_request');
  const principal = await taskPrincipal(app, ctx);
  const body = parseJsonBody(await kit.readBody());
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  const described = typeof body.gpt_description_prompt === 'string' ? body.gpt_description_prompt : '';
  if (what.action === 'LYRICS' && !prompt.trim()) throw new SunoError(400, msg('relay.field_empty', { field: 'prompt' }), 'invalid_request');
  if (what.action === 'MUSIC' && !prompt.trim() && !described.trim()) throw new SunoError(400, 'task.suno_prompt_empty', 'invalid_request');
  // Callbacks are not passed on: the upstream would call a client URL unchecked.
  delete body.notify_hook;
  const picked = await pickTaskChannel(app, principal, what.model, isSuno);
  const result = await submitTask(app, {
    table: 'tasks',
    model: what.model,
    units: 1,
    prompts: [prompt, described, typeof body.tags === 'string' ? body.tags : '', typeof body.title === 'string' ? body.title : ''],
    principal,
    picked,
    ip: kit.ip,
    pollMs: kit.pollMs,
    send: async () => {
      const up = await callUpstream(
        app,
        picked.channel,
        'POST',
        `${picked.channel.info.baseUrl}/suno/submit/${kind}`,
        bearer(picked.key),
        JSON.stringify(body),
      );
      const j = up.json() as { code?: unknown; message?: unknown; data?: unknown } | undefined;
      const id = typeof j?.data === 'string' ? j.data : '';
      if (up.status >= 300 || !j || j.code !== 'success' || !id) {
        const status = up.status >= 300 ? up.status : 502;
        const message = typeof j?.message === 'string' && j.message ? j.message : t(requestLang(ctx), 'task.upstream_status', { status: up.status });
        return { answer: { status, body: { code: typeof j?.code === 'string' && j.code !== 'success' ? j.code : 'upstream_error', message, data: null } } };
      }
      const now = Math.floor(Date.now() / 1000);
      return {
        answer: { status: 200, body: ok(id) },
        accepted: {
          upstreamId: id,
          row: {
            task_id: id,
            platform: PLATFORM,
            action: what.action,
            status: 'SUBMITTED',
            progress: '0%',
            submit_time: now,
            created_at: now,
            updated_at: now,
            properties: JSON.stringify({ input: prompt || described, mv: typeof body.mv === 'string' ? body.mv : '' }),
          },
        },
      };
    },
  });
  reply(ctx, result.answer.status, result.answer.body);
}

/** `/suno/*`; errors as `{code, message, data: null}`. */
export async function handleSuno(app: AppContext, ctx: RelayHttp, kit: TaskKit): Promise<void> {
  const path = ctx.path;
  try {
    let m: RegExpExecArray | null;
    if (ctx.method === 'POST' && (m = /^\/suno\/submit\/([a-z]+)$/.exec(path))) return await submit(app, ctx, kit, m[1]!);
    if (ctx.method === 'POST' && path === '/suno/fetch') {
      const principal = await taskPrincipal(app, ctx);
      const body = parseJsonBody(await kit.readBody());
      const ids = Array.isArray(body.ids) ? body.ids.filter((x): x is string => typeof x === 'string').slice(0, 1000) : [];
      const rows = ids.length ? await findTaskRows(app.knex, 'tasks', ids, principal.user.id, PLATFORM) : [];
      const action = typeof body.action === 'string' ? body.action.toUpperCase() : '';
      return reply(ctx, 200, ok(rows.filter((r) => !action || r.action === action).map(sunoDto)));
    }
    if (ctx.method === 'GET' && (m = /^\/suno\/fetch\/([^/]+)$/.exec(path))) {
      const principal = await taskPrincipal(app, ctx);
      const [row] = await findTaskRows(app.knex, 'tasks', [decodeURIComponent(m[1]!)], principal.user.id, PLATFORM);
      if (!row) throw new SunoError(404, 'task.not_found', 'task_not_exist');
      return reply(ctx, 200, ok(sunoDto(row)));
    }
    throw new SunoError(404, msg('relay.invalid_url', { method: ctx.method, path }), 'not_found');
  } catch (err) {
    if (!(err instanceof AppError)) app.log.error({ err, path }, 'suno route failed');
    const status = err instanceof AppError ? err.status : 500;
    const code = err instanceof AppError ? err.code : 'internal_error';
    reply(ctx, status, {
      code,
      message: err instanceof AppError ? localize(err, requestLang(ctx)) : t(requestLang(ctx), 'common.internal_error_short'),
      data: null,
    });
  }
}

function pollResult(t: Record<string, unknown>): PollResult {
  let status = String(t.status ?? '').toUpperCase();
  if (!STATUSES.has(status)) status = 'UNKNOWN';
  const sec = (v: unknown) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) return 0;
    return n > 1e11 ? Math.floor(n / 1000) : Math.floor(n); // milliseconds from some upstreams
  };
  const patch: Record<string, unknown> = { data: JSON.stringify(t.data ?? null) };
  if (sec(t.start_time)) patch.start_time = sec(t.start_time);
  if (sec(t.finish_time)) patch.finish_time = sec(t.finish_time);
  return {
    status,
    progress: typeof t.progress === 'string' && t.progress ? t.progress : status === 'SUCCESS' ? '100%' : '0%',
    failReason: typeof t.fail_reason === 'string' ? t.fail_reason : undefined,
    patch,
  };
}

export const sunoPlatform: TaskPlatform = {
  name: 'suno',
  table: 'tasks',
  owns: (row) => row.platform === PLATFORM,
  async poll(app, picked, rows) {
    const up = await callUpstream(
      app,
      picked.channel,
      'POST',
      `${picked.channel.info.baseUrl}/suno/fetch`,
      bearer(picked.key),
      JSON.stringify({ ids: rows.map((r) => String(r.task_id)) }),
      30_000,
    );
    const j = up.json() as { code?: unknown; data?: unknown } | undefined;
    if (up.status !== 200 || !j || j.code !== 'success' || !Array.isArray(j.data)) throw new Error(`suno fetch ${up.status}`);
    const byId = new Map<string, Record<string, unknown>>();
    for (const t of j.data) if (t && typeof t === 'object') byId.set(String((t as { task_id?: unknown }).task_id), t as Record<string, unknown>);
    const out = new Map<number, PollResult>();
    for (const r of rows) {
      const t = byId.get(String(r.task_id));
      if (t) out.set(r.id, pollResult(t));
    }
    return out;
  },
  finishPatch: (nowMs) => ({ finish_time: Math.floor(nowMs / 1000) }),
};
