import type { AppContext } from '../context';
import { localize, msg, requestLang, t, verbatim } from '../i18n';
import { CHANNEL_TYPE } from '../channels/kinds';
import { typesServedBy } from '../channels/catalogue';
import { AppError } from '../lib/errors';
import { RelayError } from '../relay/errors';
import type { RelayHttp } from '../relay/httpContext';
import { parseMultipart } from '../relay/multipart';
import { findTaskRows, userTaskRows, type TaskRecord } from '../repositories/tasks';
import { callUpstream, channelOfTask, parseJsonBody, pickTaskChannel, reply, submitTask, taskPrincipal } from './core';
import type { PollResult, TaskPlatform } from './poller';
import type { TaskKit } from './types';

/**
 * OpenAI's video API (`/v1/videos`: create, retrieve, download the content, list) on OpenAI-kind
 * channels, as a task: billed per second of video (`seconds`, default 4) at the model's price,
 * followed by the poller (GET /v1/videos/{id} upstream), listed in the task log with platform
 * `openai` and type `VIDEO`. Answers are OpenAI video objects; errors OpenAI's error envelope.
 */

const PLATFORM = 'openai';
const NOT_VIDEO = new Set<number>([CHANNEL_TYPE.Midjourney, CHANNEL_TYPE.MidjourneyPlus, CHANNEL_TYPE.Suno]);
let videoKinds: Set<number> | undefined;
const isVideoKind = (type: number) => (videoKinds ??= new Set(typesServedBy('openai').filter((t) => !NOT_VIDEO.has(t)))).has(type);

const DEFAULT_MODEL = 'sora-2';
const DEFAULT_SECONDS = 4;

/** OpenAI video status → task status, and back. */
const TO_TASK: Record<string, string> = { queued: 'QUEUED', in_progress: 'IN_PROGRESS', completed: 'SUCCESS', failed: 'FAILURE' };
const TO_OPENAI: Record<string, string> = {
  QUEUED: 'queued',
  SUBMITTED: 'queued',
  NOT_START: 'queued',
  IN_PROGRESS: 'in_progress',
  SUCCESS: 'completed',
  FAILURE: 'failed',
};

const parse = (s: unknown): Record<string, unknown> => {
  try {
    const v = typeof s === 'string' && s ? (JSON.parse(s) as unknown) : null;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** A task row as an OpenAI video object (the upstream's last answer, with our status and progress). */
export function videoDto(row: TaskRecord): Record<string, unknown> {
  const last = parse(row.data);
  const props = parse(row.properties);
  const status = TO_OPENAI[String(row.status)] ?? 'queued';
  const out: Record<string, unknown> = {
    id: row.task_id,
    object: 'video',
    model: last.model ?? props.model ?? row.model_name,
    status,
    progress: Number.parseInt(String(row.progress || '0'), 10) || 0,
    created_at: last.created_at ?? Number(row.submit_time),
    completed_at: last.completed_at ?? (Number(row.finish_time) || null),
    expires_at: last.expires_at ?? null,
    seconds: last.seconds ?? props.seconds ?? String(DEFAULT_SECONDS),
    size: last.size ?? props.size ?? null,
    remixed_from_video_id: last.remixed_from_video_id ?? null,
    error: status === 'failed' ? (last.error ?? { code: 'video_generation_failed', message: row.fail_reason }) : null,
  };
  return out;
}

const openaiError = (status: number, message: string, code: string) => ({
  error: { message, type: status >= 500 ? 'upstream_error' : 'invalid_request_error', param: null, code },
});

interface CreateRequest {
  model: string;
  seconds: number;
  prompt: string;
  size: string | undefined;
  upstreamBody: Buffer | string;
  upstreamType: string;
}

/** A create request: what is billed and checked, and the body for the upstream, built from the same parse. */
async function readCreate(raw: Buffer, ctype: string): Promise<CreateRequest> {
  const check = (prompt: string, seconds: number) => {
    if (!prompt.trim()) throw new RelayError(400, msg('relay.field_empty', { field: 'prompt' }), 'invalid_request');
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 60) throw new RelayError(400, 'task.seconds_range', 'invalid_request');
  };
  if (ctype.toLowerCase().startsWith('multipart/form-data')) {
    // Each field read here comes once, as text; the upstream gets the body as parsed (relay/multipart.ts).
    const form = await parseMultipart(raw, ctype, ['model', 'seconds', 'prompt', 'size']);
    const model = form.field('model') || DEFAULT_MODEL;
    const seconds = Number(form.field('seconds') ?? DEFAULT_SECONDS);
    const prompt = form.field('prompt') ?? '';
    check(prompt, seconds);
    // The model and length billed, written out (defaults included): no upstream default can differ.
    form.set('model', model);
    form.set('seconds', String(seconds));
    const { body, contentType } = form.encode();
    return { model, seconds, prompt, size: form.field('size'), upstreamBody: body, upstreamType: contentType };
  }
  const body = parseJsonBody(raw);
  const model = typeof body.model === 'string' && body.model.trim() ? body.model.trim() : DEFAULT_MODEL;
  const seconds = Number(body.seconds ?? DEFAULT_SECONDS);
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  check(prompt, seconds);
  const size = typeof body.size === 'string' ? body.size : undefined;
  return { model, seconds, prompt, size, upstreamBody: JSON.stringify({ ...body, model }), upstreamType: 'application/json' };
}

async function create(app: AppContext, ctx: RelayHttp, kit: TaskKit): Promise<void> {
  const principal = await taskPrincipal(app, ctx);
  const ctype = ctx.get('content-type');
  // The body is not kept here: a large upload is held once, as the body sent upstream.
  const { model, seconds, prompt, size, upstreamBody, upstreamType } = await readCreate(await kit.readBody(), ctype);
  const picked = await pickTaskChannel(app, principal, model, isVideoKind);
  const result = await submitTask(app, {
    table: 'tasks',
    model,
    units: seconds,
    prompts: [prompt],
    principal,
    picked,
    ip: kit.ip,
    pollMs: kit.pollMs,
    send: async () => {
      const up = await callUpstream(
        app,
        picked.channel,
        'POST',
        `${picked.channel.info.baseUrl}/v1/videos`,
        {
          'content-type': upstreamType,
          authorization: `Bearer ${picked.key}`,
        },
        upstreamBody,
      );
      const j = up.json() as Record<string, unknown> | undefined;
      const id = typeof j?.id === 'string' ? j.id : '';
      if (up.status >= 300 || !j || !id) {
        const status = up.status >= 300 ? up.status : 502;
        const err = j?.error as { message?: unknown; code?: unknown } | undefined;
        const message = typeof err?.message === 'string' ? err.message : t(requestLang(ctx), 'task.upstream_status', { status: up.status });
        return { answer: { status, body: openaiError(status, message, typeof err?.code === 'string' ? err.code : 'upstream_error') } };
      }
      const now = Math.floor(Date.now() / 1000);
      const status = TO_TASK[String(j.status)] ?? 'QUEUED';
      return {
        answer: { status: 200, body: j },
        accepted: {
          upstreamId: id,
          row: {
            task_id: id,
            platform: PLATFORM,
            action: 'VIDEO',
            status,
            progress: `${Number(j.progress) || 0}%`,
            submit_time: now,
            created_at: now,
            updated_at: now,
            properties: JSON.stringify({ input: prompt, model, seconds: String(seconds), size: size ?? null }),
            data: JSON.stringify(j),
          },
        },
      };
    },
  });
  reply(ctx, result.answer.status, result.answer.body);
}

async function ownVideo(app: AppContext, ctx: RelayHttp, id: string): Promise<TaskRecord> {
  const principal = await taskPrincipal(app, ctx);
  const [row] = await findTaskRows(app.knex, 'tasks', [id], principal.user.id, PLATFORM);
  if (!row) throw new RelayError(404, verbatim(`Video with id '${id}' not found.`), 'video_not_found');
  return row;
}

/** The finished video's bytes, from the channel that made it. */
async function content(app: AppContext, ctx: RelayHttp, id: string): Promise<void> {
  const row = await ownVideo(app, ctx, id);
  if (row.status !== 'SUCCESS') throw new RelayError(409, 'task.video_not_ready', 'video_not_ready');
  const picked = await channelOfTask(app, row);
  if (!picked) throw new RelayError(404, 'task.video_channel_deleted', 'video_not_found');
  const variant = typeof ctx.query.variant === 'string' ? `?variant=${encodeURIComponent(ctx.query.variant)}` : '';
  const up = await callUpstream(app, picked.channel, 'GET', `${picked.channel.info.baseUrl}/v1/videos/${encodeURIComponent(id)}/content${variant}`, {
    authorization: `Bearer ${picked.key}`,
  });
  if (up.status !== 200)
    throw new RelayError(up.status >= 400 && up.status < 600 ? up.status : 502, msg('task.upstream_status', { status: up.status }), 'upstream_error');
  ctx.set('content-type', up.contentType || 'video/mp4');
  reply(ctx, 200, up.body);
}

async function list(app: AppContext, ctx: RelayHttp): Promise<void> {
  const principal = await taskPrincipal(app, ctx);
  const limit = Math.min(100, Math.max(1, Number.parseInt(String(ctx.query.limit ?? '20'), 10) || 20));
  let beforeId: number | undefined;
  if (typeof ctx.query.after === 'string' && ctx.query.after) {
    const [cursor] = await findTaskRows(app.knex, 'tasks', [ctx.query.after], principal.user.id, PLATFORM);
    if (!cursor) throw new RelayError(400, verbatim(`Invalid 'after': ${ctx.query.after}`), 'invalid_request');
    beforeId = cursor.id;
  }
  const rows = await userTaskRows(app.knex, principal.user.id, PLATFORM, limit + 1, beforeId);
  const page = rows.slice(0, limit).map(videoDto);
  reply(ctx, 200, {
    object: 'list',
    data: page,
    first_id: page[0]?.id ?? null,
    last_id: page[page.length - 1]?.id ?? null,
    has_more: rows.length > limit,
  });
}

/** `/v1/videos…`; errors in OpenAI's envelope. */
export async function handleVideo(app: AppContext, ctx: RelayHttp, kit: TaskKit): Promise<void> {
  const path = ctx.path;
  try {
    let m: RegExpExecArray | null;
    if (path === '/v1/videos' && ctx.method === 'POST') return await create(app, ctx, kit);
    if (path === '/v1/videos' && ctx.method === 'GET') return await list(app, ctx);
    if (ctx.method === 'GET' && (m = /^\/v1\/videos\/([^/]+)\/content$/.exec(path))) return await content(app, ctx, decodeURIComponent(m[1]!));
    if (ctx.method === 'GET' && (m = /^\/v1\/videos\/([^/]+)$/.exec(path)))
      return reply(ctx, 200, videoDto(await ownVideo(app, ctx, decodeURIComponent(m[1]!))));
    throw new RelayError(404, msg('relay.invalid_url', { method: ctx.method, path }), 'not_found');
  } catch (err) {
    if (!(err instanceof AppError)) app.log.error({ err, path }, 'video route failed');
    const status = err instanceof AppError ? err.status : 500;
    reply(
      ctx,
      status,
      openaiError(
        status,
        err instanceof AppError ? localize(err, requestLang(ctx)) : t(requestLang(ctx), 'common.internal_error_short'),
        err instanceof AppError ? err.code : 'internal_error',
      ),
    );
  }
}

export const videoPlatform: TaskPlatform = {
  name: 'video',
  table: 'tasks',
  owns: (row) => row.platform === PLATFORM,
  async poll(app, picked, rows) {
    const out = new Map<number, PollResult>();
    for (const r of rows) {
      // One request per video: a failed one backs off that video only (no entry), not the others.
      let up: Awaited<ReturnType<typeof callUpstream>>;
      try {
        up = await callUpstream(
          app,
          picked.channel,
          'GET',
          `${picked.channel.info.baseUrl}/v1/videos/${encodeURIComponent(String(r.task_id))}`,
          { authorization: `Bearer ${picked.key}` },
          undefined,
          30_000,
        );
      } catch (err) {
        app.log.warn({ err: String(err), task: r.task_id }, 'video poll failed');
        continue;
      }
      const j = up.json() as Record<string, unknown> | undefined;
      if (up.status !== 200 || !j || typeof j !== 'object') continue;
      const status = TO_TASK[String(j.status)] ?? 'UNKNOWN';
      const err = j.error as { message?: unknown } | undefined;
      const patch: Record<string, unknown> = { data: JSON.stringify(j) };
      if (status === 'IN_PROGRESS' && !Number(r.start_time)) patch.start_time = Math.floor(Date.now() / 1000);
      if (Number(j.completed_at)) patch.finish_time = Number(j.completed_at);
      out.set(r.id, {
        status,
        progress: `${status === 'SUCCESS' ? 100 : Math.max(0, Math.min(100, Number(j.progress) || 0))}%`,
        failReason: typeof err?.message === 'string' ? err.message : undefined,
        patch,
      });
    }
    return out;
  },
  finishPatch: (nowMs) => ({ finish_time: Math.floor(nowMs / 1000) }),
};
