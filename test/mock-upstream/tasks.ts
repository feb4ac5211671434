/**
 * Mock upstreams of the asynchronous task protocols, each to its published wire format:
 *
 * - midjourney-proxy (novicezk/midjourney-proxy): `POST /mj/submit/{imagine,change,simple-change,
 *   blend,describe,action,modal,shorten,upload-discord-images}` answering `{code, description,
 *   result, properties}`, `POST /mj/task/list-by-condition` ({ids}) and `GET /mj/task/{id}/fetch`
 *   answering Task objects; the key in `mj-api-secret`. Mode prefixes `/mj-fast` etc. accepted.
 * - Suno API (as new-api relays it): `POST /suno/submit/{music,lyrics}` → `{code:"success",
 *   message, data:<task id>}`, `POST /suno/fetch` ({ids, action}) → `{code, data:[task]}`.
 * - OpenAI video: `POST /v1/videos` → video object, `GET /v1/videos/{id}`,
 *   `GET /v1/videos/{id}/content` (mp4 bytes).
 *
 * Every task moves one step per poll of it: in progress 50 % → done (Suno: queued first). A prompt
 * containing `fail` ends in failure; `reject` is refused at submit; a Suno prompt containing `odd`
 * reports a status outside the protocol's list on its first poll. Midjourney's CustomZoom action
 * waits in MODAL from its first poll, Inpaint answers code 21 (waiting, `properties.status`
 * MODAL); `/mj/submit/modal` confirms such a task and it goes on under the same id. `failPolls` makes the poll
 * endpoints answer 500, `dropPolls` drops the connection of one video's poll; `pollDelayMs` slows
 * them (concurrency tests).
 */
import type http from 'node:http';
import zlib from 'node:zlib';
import { listen } from './seed';

/** A real (visible) PNG: a 96×96 orange square, so the console's image viewer shows something. */
function orangePng(size = 96): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => [240, 120, 40]).flat())]);
  const raw = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

export interface MockTask {
  id: string;
  /** When it reached each step (epoch ms): `at[0]` the submit. */
  at: number[];
  kind: 'mj' | 'suno' | 'video';
  action: string;
  prompt: string;
  step: number;
  body: Record<string, unknown>;
  path: string;
  /** A Midjourney action that opens a modal: shown as MODAL from its first poll until `/mj/submit/modal` confirms it. */
  modal?: 'waiting' | 'confirmed';
}

export interface TaskMock {
  url: string;
  /** Upstream keys accepted (mj-api-secret / Bearer). */
  keys: { mj: string; suno: string; video: string };
  tasks: Map<string, MockTask>;
  requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders; body: any }>;
  /** How many times each task id was asked about by a poll endpoint. */
  polled: Map<string, number>;
  failPolls: boolean;
  /** Video ids whose poll (`GET /v1/videos/{id}`) gets its connection dropped (a network error). */
  dropPolls: Set<string>;
  pollDelayMs: number;
  /** Image bytes served at /images/{id}.png. */
  image: Buffer;
  reset(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function send(res: http.ServerResponse, status: number, body: unknown, type = 'application/json') {
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': type, 'content-length': buf.length });
  res.end(buf);
}

let seq = 0;
const newId = (prefix: string) => `${prefix}${Date.now()}${String(++seq).padStart(4, '0')}`;

export async function startTaskMock(): Promise<TaskMock> {
  const PNG = orangePng();
  const mock: TaskMock = {
    url: '',
    keys: { mj: 'mj-upstream-secret', suno: 'suno-upstream-key', video: 'video-upstream-key' },
    tasks: new Map(),
    requests: [],
    polled: new Map(),
    failPolls: false,
    dropPolls: new Set(),
    pollDelayMs: 0,
    image: PNG,
    reset() {
      this.tasks.clear();
      this.requests.length = 0;
      this.polled.clear();
      this.failPolls = false;
      this.dropPolls.clear();
      this.pollDelayMs = 0;
    },
    close: async () => undefined,
  };

  const advance = (t: MockTask) => {
    t.step++;
    t.at[t.step] = Date.now();
  };
  const ms = (t: MockTask, step: number) => t.at[step] ?? 0;
  const sec = (t: MockTask, step: number) => Math.floor(ms(t, step) / 1000);
  const count = (id: string) => mock.polled.set(id, (mock.polled.get(id) ?? 0) + 1);

  // ---- midjourney-proxy ----
  const mjTask = (t: MockTask) => {
    const failed = t.prompt.includes('fail');
    const waiting = t.modal === 'waiting' && t.step >= 1;
    const status = waiting ? 'MODAL' : t.step === 0 ? 'SUBMITTED' : t.step === 1 ? 'IN_PROGRESS' : failed ? 'FAILURE' : 'SUCCESS';
    if (waiting) return { id: t.id, action: t.action, prompt: t.prompt, status, progress: '0%', submitTime: ms(t, 0), buttons: [], properties: {} };
    return {
      id: t.id,
      action: t.action,
      prompt: t.prompt,
      promptEn: `${t.prompt} (en)`,
      description: '/imagine ' + t.prompt,
      state: t.body.state ?? '',
      submitTime: ms(t, 0),
      startTime: ms(t, 1),
      finishTime: ms(t, 2),
      imageUrl: t.step >= 2 && !failed ? `${mock.url}/images/${t.id}.png` : null,
      status,
      progress: t.step === 0 ? '0%' : t.step === 1 ? '50%' : failed ? '0%' : '100%',
      failReason: t.step >= 2 && failed ? 'Banned prompt detected by the mock' : null,
      buttons:
        t.step >= 2 && !failed
          ? [
              { customId: `MJ::JOB::upsample::1::${t.id}`, emoji: '', label: 'U1', type: 2, style: 2 },
              { customId: `MJ::JOB::variation::1::${t.id}`, emoji: '', label: 'V1', type: 2, style: 2 },
            ]
          : [],
      properties: { finalPrompt: t.prompt },
    };
  };

  async function midjourney(method: string, path: string, req: http.IncomingMessage, json: any, res: http.ServerResponse) {
    if (req.headers['mj-api-secret'] !== mock.keys.mj) return send(res, 401, { code: 4, description: 'unauthorized', result: null });
    const m = /^(?:\/mj-(?:fast|turbo|relax))?\/mj\/(.+)$/.exec(path)!;
    const rest = m[1]!;
    if (method === 'POST' && rest.startsWith('submit/')) {
      const kind = rest.slice('submit/'.length);
      if (kind === 'upload-discord-images') return send(res, 200, { code: 1, description: '成功', result: ['https://cdn.example/upload.png'] });
      const prompt = String(json.prompt ?? json.content ?? '');
      if (prompt.includes('reject')) return send(res, 200, { code: 24, description: '可能包含敏感词', result: null, properties: { promptEn: prompt } });
      const actions: Record<string, string> = { imagine: 'IMAGINE', blend: 'BLEND', describe: 'DESCRIBE', shorten: 'SHORTEN', modal: 'MODAL' };
      if (kind === 'modal') {
        // Confirms a task waiting in MODAL; it goes on under its own id.
        const t = mock.tasks.get(String(json.taskId));
        if (!t || t.modal !== 'waiting') return send(res, 200, { code: 4, description: '任务状态错误', result: null });
        t.modal = 'confirmed';
        t.step = 0;
        t.at = [Date.now()];
        if (json.prompt) t.prompt = String(json.prompt);
        return send(res, 200, { code: 1, description: '提交成功', result: t.id, properties: { discordInstanceId: 'mock' } });
      }
      let action = actions[kind] ?? String(json.action ?? 'UPSCALE');
      const customId = String(json.customId ?? '');
      if (kind === 'action')
        action = customId.startsWith('MJ::CustomZoom::')
          ? 'CUSTOM_ZOOM'
          : customId.startsWith('MJ::Inpaint::')
            ? 'INPAINT'
            : customId.includes('variation')
              ? 'VARIATION'
              : 'UPSCALE';
      const id = newId('');
      const modal = action === 'CUSTOM_ZOOM' || action === 'INPAINT' ? ('waiting' as const) : undefined;
      const t: MockTask = { id, kind: 'mj', action, prompt, step: 0, at: [Date.now()], body: json, path, modal };
      mock.tasks.set(id, t);
      if (action === 'INPAINT') {
        t.step = 1;
        return send(res, 200, { code: 21, description: '窗口等待', result: id, properties: { status: 'MODAL', discordInstanceId: 'mock' } });
      }
      return send(res, 200, { code: 1, description: '提交成功', result: id, properties: { discordInstanceId: 'mock' } });
    }
    if (method === 'POST' && rest === 'task/list-by-condition') {
      if (mock.pollDelayMs) await sleep(mock.pollDelayMs);
      if (mock.failPolls) return send(res, 500, { code: 23, description: 'mock outage' });
      const out = [];
      for (const id of (json.ids ?? []) as string[]) {
        const t = mock.tasks.get(id);
        if (!t) continue;
        count(id);
        if (!(t.modal === 'waiting' && t.step >= 1)) advance(t);
        out.push(mjTask(t));
      }
      return send(res, 200, out);
    }
    const f = /^task\/([^/]+)\/fetch$/.exec(rest);
    if (method === 'GET' && f) {
      const t = mock.tasks.get(f[1]!);
      return t ? send(res, 200, mjTask(t)) : send(res, 404, { code: 3, description: 'task not found' });
    }
    return send(res, 404, { code: 4, description: 'not found' });
  }

  // ---- Suno ----
  const sunoTask = (t: MockTask) => {
    // Suno queues first: QUEUED on the first poll, IN_PROGRESS on the second, done on the third.
    const failed = t.prompt.includes('fail');
    const status =
      t.step <= 1 ? (t.step === 1 && t.prompt.includes('odd') ? 'PAUSED_BY_SUNO' : 'QUEUED') : t.step === 2 ? 'IN_PROGRESS' : failed ? 'FAILURE' : 'SUCCESS';
    const done = t.step >= 3 && !failed;
    return {
      task_id: t.id,
      action: t.action,
      status,
      fail_reason: t.step >= 3 && failed ? 'suno refused the prompt' : '',
      submit_time: sec(t, 0),
      start_time: sec(t, 2),
      finish_time: sec(t, 3),
      progress: t.step <= 1 ? '0%' : t.step === 2 ? '50%' : '100%',
      data:
        t.action === 'LYRICS'
          ? done
            ? { id: t.id, title: 'Mock song', text: '[Verse]\nla la la', status: 'complete' }
            : null
          : done
            ? [
                {
                  id: `${t.id}-clip1`,
                  title: 'Mock song',
                  status: 'complete',
                  audio_url: `${mock.url}/audio/${t.id}-1.mp3`,
                  image_url: `${mock.url}/images/${t.id}.png`,
                  metadata: { tags: t.body.tags ?? '', prompt: t.prompt, duration: 120 },
                  model_name: t.body.mv ?? 'chirp-v3-5',
                },
              ]
            : [],
    };
  };

  async function suno(method: string, path: string, req: http.IncomingMessage, json: any, res: http.ServerResponse) {
    if (req.headers.authorization !== `Bearer ${mock.keys.suno}`) return send(res, 401, { code: 'unauthorized', message: 'bad key', data: null });
    const sub = /^\/suno\/submit\/(music|lyrics)$/.exec(path);
    if (method === 'POST' && sub) {
      const prompt = String(json.prompt || json.gpt_description_prompt || '');
      if (prompt.includes('reject')) return send(res, 400, { code: 'prompt_rejected', message: 'prompt rejected by the mock', data: null });
      const id = newId('suno-');
      mock.tasks.set(id, { id, kind: 'suno', action: sub[1] === 'music' ? 'MUSIC' : 'LYRICS', prompt, step: 0, at: [Date.now()], body: json, path });
      return send(res, 200, { code: 'success', message: '', data: id });
    }
    if (method === 'POST' && path === '/suno/fetch') {
      if (mock.pollDelayMs) await sleep(mock.pollDelayMs);
      if (mock.failPolls) return send(res, 500, { code: 'error', message: 'mock outage', data: null });
      const out = [];
      for (const id of (json.ids ?? []) as string[]) {
        const t = mock.tasks.get(id);
        if (!t) continue;
        count(id);
        advance(t);
        out.push(sunoTask(t));
      }
      return send(res, 200, { code: 'success', message: '', data: out });
    }
    return send(res, 404, { code: 'not_found', message: 'not found', data: null });
  }

  // ---- OpenAI video ----
  const videoObj = (t: MockTask) => {
    const failed = t.prompt.includes('fail');
    const status = t.step === 0 ? 'queued' : t.step === 1 ? 'in_progress' : failed ? 'failed' : 'completed';
    return {
      id: t.id,
      object: 'video',
      model: t.body.model ?? 'sora-2',
      status,
      progress: t.step === 0 ? 0 : t.step === 1 ? 50 : 100,
      created_at: sec(t, 0),
      completed_at: t.step >= 2 ? sec(t, 2) : null,
      expires_at: t.step >= 2 ? sec(t, 2) + 86_400 : null,
      seconds: String(t.body.seconds ?? '4'),
      size: t.body.size ?? '720x1280',
      remixed_from_video_id: null,
      error: t.step >= 2 && failed ? { code: 'moderation_blocked', message: 'The video was blocked by moderation' } : null,
    };
  };

  async function video(method: string, path: string, req: http.IncomingMessage, json: any, raw: Buffer, res: http.ServerResponse) {
    if (req.headers.authorization !== `Bearer ${mock.keys.video}`)
      return send(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
    if (method === 'POST' && path === '/v1/videos') {
      let body = json ?? {};
      if (String(req.headers['content-type']).startsWith('multipart/form-data')) {
        const text = raw.toString('latin1');
        body = {};
        for (const m of text.matchAll(/name="([^"]+)"\r\n\r\n([^\r]*)\r\n/g)) body[m[1]!] = m[2];
      }
      const prompt = String(body.prompt ?? '');
      if (prompt.includes('reject'))
        return send(res, 400, {
          error: { message: 'Your request was rejected by the safety system', type: 'invalid_request_error', code: 'moderation_blocked' },
        });
      const id = newId('video_');
      const t: MockTask = { id, kind: 'video', action: 'VIDEO', prompt, step: 0, at: [Date.now()], body, path };
      mock.tasks.set(id, t);
      return send(res, 200, videoObj(t));
    }
    const c = /^\/v1\/videos\/([^/]+)\/content$/.exec(path);
    if (method === 'GET' && c) {
      const t = mock.tasks.get(c[1]!);
      if (!t || t.step < 2) return send(res, 404, { error: { message: 'not ready', type: 'invalid_request_error', code: 'not_found' } });
      return send(res, 200, Buffer.from(`mock-mp4:${t.id}`), 'video/mp4');
    }
    const g = /^\/v1\/videos\/([^/]+)$/.exec(path);
    if (method === 'GET' && g) {
      if (mock.pollDelayMs) await sleep(mock.pollDelayMs);
      if (mock.failPolls) return send(res, 500, { error: { message: 'mock outage', type: 'server_error', code: null } });
      if (mock.dropPolls.has(g[1]!)) return void req.socket.destroy();
      const t = mock.tasks.get(g[1]!);
      if (!t) return send(res, 404, { error: { message: 'not found', type: 'invalid_request_error', code: 'not_found' } });
      count(t.id);
      advance(t);
      return send(res, 200, videoObj(t));
    }
    return send(res, 404, { error: { message: 'not found', type: 'invalid_request_error', code: 'not_found' } });
  }

  const server = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const url = req.url ?? '/';
      const path = url.split('?')[0]!;
      let json: any;
      try {
        json = raw.length && String(req.headers['content-type']).includes('json') ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        json = undefined;
      }
      const method = req.method ?? 'GET';
      mock.requests.push({ method, path, headers: req.headers, body: json });
      const run = async () => {
        if (method === 'GET' && path.startsWith('/images/')) return send(res, 200, mock.image, 'image/png');
        if (/^(?:\/mj-(?:fast|turbo|relax))?\/mj\//.test(path)) return midjourney(method, path, req, json ?? {}, res);
        if (path.startsWith('/suno/')) return suno(method, path, req, json ?? {}, res);
        if (path.startsWith('/v1/videos')) return video(method, path, req, json, raw, res);
        return send(res, 404, { error: 'no route' });
      };
      run().catch((err: unknown) => send(res, 500, { error: String(err) }));
    });
  });
  mock.url = server.url;
  mock.close = server.close;
  return mock;
}
