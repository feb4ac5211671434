/**
 * Multipart uploads (issue 40 item 3): the gateway bills and checks the fields the upstream reads.
 * Every multipart path — videos (tasks/video.ts), image edits, audio transcriptions and
 * translations (relay/index.ts) — parses the body once (relay/multipart.ts) and forwards it as
 * parsed. The mock upstream reads what it receives with another parser (Node's own FormData) and
 * records every value of every field, so each test compares the bill with what the upstream saw.
 */
import type http from 'node:http';
import OpenAI from 'openai';
import { buildApp, ALL_TARGETS, makeUser, type TestApp } from '../helpers/app';
import { flushUsage, listen, seedChannel, seedToken, setOptions } from '../mock-upstream/seed';

/** USD per call (images) or per second (videos). */
const PRICE: Record<string, number> = { 'sora-2': 0.1, 'sora-2-pro': 0.5, 'dall-e-3': 0.04, 'gpt-image-1': 0.2 };
const RATIO: Record<string, number> = { 'whisper-1': 15, 'whisper-pro': 150 };
const Q = (usd: number) => Math.round(usd * 500_000);
const B = 'client-boundary-7MA4YWxkTrZu0gW';

/** One part of a hand-written body; `disposition` is what follows `form-data; `. */
const part = (disposition: string, value: string | Buffer, headers = '') =>
  Buffer.concat([Buffer.from(`--${B}\r\nContent-Disposition: form-data; ${disposition}\r\n${headers}\r\n`, 'latin1'), Buffer.from(value), Buffer.from('\r\n')]);
const text = (name: string, value: string) => part(`name="${name}"`, value);
const closed = (...parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${B}--\r\n`)]);
const CTYPE = `multipart/form-data; boundary=${B}`;
/** The refusal of a repeated field (the zh catalogue: the test agent speaks as the console). */
const MALFORMED = /^multipart\/form-data 请求体格式错误/;
const DUPLICATE = (field: string) => new RegExp(`^multipart/form-data 请求体中字段 ${field} 出现了不止一次$`);

/** A plain file, for the bodies written by hand (their parts are the point). */
const FILE = Buffer.from('\x89PNG fake image bytes', 'latin1');
/** Bytes a naive parser could trip on: CR/LF, dashes, a boundary-looking line, NUL and high bytes. */
const BINARY = Buffer.concat([Buffer.from(`\r\n--${B}x\r\n--\r\n`), Buffer.from([0, 1, 2, 0xff, 0xfe, 0x0d, 0x0a, 0x2d, 0x2d]), Buffer.alloc(4096, 0xab)]);

interface Seen {
  path: string;
  contentType: string;
  /** Every value of every field, as Node's FormData parser reads the forwarded body. */
  fields: Map<string, Array<string | { filename: string; type: string; bytes: Buffer }>>;
}

/** The fields as the upstream reads them; undefined when its parser refuses the body. */
async function readForm(body: Buffer, contentType: string): Promise<Seen['fields'] | undefined> {
  const fd = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData().catch(() => undefined);
  if (!fd) return undefined;
  const fields: Seen['fields'] = new Map();
  for (const [name, v] of fd.entries()) {
    const list = fields.get(name) ?? [];
    list.push(typeof v === 'string' ? v : { filename: v.name, type: v.type, bytes: Buffer.from(await v.arrayBuffer()) });
    fields.set(name, list);
  }
  return fields;
}

describe.each(ALL_TARGETS.map((t) => [t.name, t] as const))('multipart uploads bill what the upstream reads [%s]', (_name, target) => {
  let app: TestApp;
  let upstream: { url: string; close(): Promise<void> };
  const seen: Seen[] = [];
  let userId: number;
  let key: string;
  let client: OpenAI;
  let gw: { url: string; close(): Promise<void> };

  /** The one value of a field the upstream saw (fails when it saw several). */
  const one = (s: Seen, name: string) => {
    const v = s.fields.get(name) ?? [];
    expect(v).toHaveLength(1);
    return v[0] as string;
  };
  const quota = async (id = userId) => Number((await app.knex('users').where({ id }).first()).quota);
  /** Reservations neither settled nor refunded (a settled one waits for the usage flush). */
  const openReservations = async () => {
    await flushUsage(app);
    return (await app.knex('reservations').where({ user_id: userId })).length;
  };
  const post = (path: string, body: Buffer, k = key, ctype = CTYPE) =>
    app.http().post(path).set('authorization', `Bearer ${k}`).set('content-type', ctype).send(body);

  /** Expects a 400 in OpenAI's envelope that moved no quota, reached no upstream and left no task. */
  const expectRefused = async (res: { status: number; body: { error?: { message?: string; type?: string } } }, before: number, message: RegExp) => {
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(res.body.error!.message).toMatch(message);
    expect(await quota()).toBe(before);
    expect(await openReservations()).toBe(0);
    expect(seen).toHaveLength(0);
  };

  beforeAll(async () => {
    app = await buildApp(target, { config: { taskPollMs: 0 } });
    upstream = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const contentType = String(req.headers['content-type'] ?? '');
        void readForm(Buffer.concat(chunks), contentType).then((fields) => {
          const s: Seen = { path: req.url ?? '', contentType, fields: fields ?? new Map() };
          seen.push(s);
          if (!fields) {
            res.statusCode = 400;
            res.end(JSON.stringify({ error: { message: 'the upstream could not read the form', type: 'invalid_request_error' } }));
            return;
          }
          const first = (name: string) => String(fields.get(name)?.[0] ?? '');
          res.setHeader('content-type', 'application/json');
          if (s.path === '/v1/videos') {
            res.end(
              JSON.stringify({
                id: `video_${seen.length}_${Date.now()}`,
                object: 'video',
                model: first('model'),
                status: 'queued',
                progress: 0,
                seconds: first('seconds'),
              }),
            );
          } else if (s.path === '/v1/images/edits') {
            const n = Number(first('n') || 1);
            res.end(JSON.stringify({ created: 1, data: Array.from({ length: n }, (_, i) => ({ url: `https://img.example/${i}.png` })) }));
          } else res.end(JSON.stringify({ text: 'a short transcription of the upload' }));
        });
      });
    });
    gw = await listen(app.callback);
    await seedChannel(app, { base_url: upstream.url, models: 'sora-2,sora-2-pro,dall-e-3,gpt-image-1,whisper-1,whisper-pro' });
    await setOptions(app, { ModelPrice: JSON.stringify(PRICE), ModelRatio: JSON.stringify(RATIO) });
    userId = (await makeUser(app, { quota: 100_000_000 })).id;
    key = (await seedToken(app, userId)).key;
    client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
    await app?.close();
  });
  beforeEach(() => {
    seen.length = 0;
  });

  describe('videos (POST /v1/videos)', () => {
    it('the exact attack — model=sora-2, seconds=1 … seconds=60, model=sora-2-pro — is refused; nothing is billed or sent', async () => {
      const before = await quota();
      const attack = closed(
        text('model', 'sora-2'),
        text('seconds', '1'),
        text('prompt', 'a fox'),
        part('name="input_reference"; filename="ref.png"', FILE, 'Content-Type: image/png\r\n'),
        text('seconds', '60'),
        text('model', 'sora-2-pro'),
      );
      await expectRefused(await post('/v1/videos', attack), before, DUPLICATE('seconds'));
      expect(await app.knex('tasks').where({ user_id: userId })).toHaveLength(0);
      // A token limited to sora-2 is refused the same way (it never reaches sora-2-pro).
      const limited = await seedToken(app, userId, { model_limits: 'sora-2' });
      await expectRefused(await post('/v1/videos', attack, limited.key), before, DUPLICATE('seconds'));
    });

    it('an unquoted name (name=seconds, name=model) is read like a quoted one: billed as the upstream makes it', async () => {
      const before = await quota();
      const res = await post('/v1/videos', closed(part('name=model', 'sora-2-pro'), part('name=seconds', '12'), text('prompt', 'a fox')));
      expect(res.status).toBe(200);
      expect(seen).toHaveLength(1);
      const model = one(seen[0]!, 'model');
      const seconds = one(seen[0]!, 'seconds');
      expect([model, seconds]).toEqual(['sora-2-pro', '12']);
      expect(before - (await quota())).toBe(Q(PRICE[model]! * Number(seconds)));
    });

    it("a token's model limit is checked against the model the upstream gets (an unquoted model was invisible and defaulted to sora-2)", async () => {
      const limited = await seedToken(app, userId, { model_limits: 'sora-2' });
      const before = await quota();
      const res = await post('/v1/videos', closed(part('name=model', 'sora-2-pro'), text('prompt', 'a fox')), limited.key);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('model_not_allowed');
      expect(await quota()).toBe(before);
      expect(seen).toHaveLength(0);
    });

    it('a normal upload works: the defaults are written out, the file arrives byte for byte, billed as seen', async () => {
      const before = await quota();
      const res = await app
        .http()
        .post('/v1/videos')
        .set('authorization', `Bearer ${key}`)
        .field('prompt', 'a fox in the snow')
        .field('size', '1280x720')
        .attach('input_reference', BINARY, { filename: 'réf "1".png', contentType: 'image/png' });
      expect(res.status).toBe(200);
      const s = seen[0]!;
      expect(s.contentType).toMatch(/^multipart\/form-data; boundary=----GatewayFormBoundary[0-9a-f]{32}$/);
      // No model and no length in the request: the defaults billed (sora-2, 4 s) are what the upstream gets.
      expect([one(s, 'model'), one(s, 'seconds'), one(s, 'prompt'), one(s, 'size')]).toEqual(['sora-2', '4', 'a fox in the snow', '1280x720']);
      const file = s.fields.get('input_reference')![0] as { filename: string; type: string; bytes: Buffer };
      expect(file.type).toBe('image/png');
      // Quotes written the browsers' way (%22), which form parsers decode back.
      expect(file.filename).toBe('réf "1".png');
      expect(file.bytes.equals(BINARY)).toBe(true);
      expect(before - (await quota())).toBe(Q(PRICE['sora-2']! * 4));
      const row = await app.knex('tasks').where({ task_id: res.body.id }).first();
      expect(JSON.parse(row.properties)).toMatchObject({ model: 'sora-2', seconds: '4', size: '1280x720' });
    });

    it('seconds as the upstream reads it: " 8 " is billed 8 and sent as 8', async () => {
      const before = await quota();
      const res = await post('/v1/videos', closed(text('model', ' sora-2 '), text('seconds', ' 8 '), text('prompt', 'a fox')));
      expect(res.status).toBe(200);
      expect([one(seen[0]!, 'model'), one(seen[0]!, 'seconds')]).toEqual(['sora-2', '8']);
      expect(before - (await quota())).toBe(Q(PRICE['sora-2']! * 8));
    });

    it('a part after the closing delimiter, a name*= field and a file under a read name: never a different model upstream', async () => {
      const before = await quota();
      // The epilogue is not part of the form: the upstream never gets it.
      const epilogue = Buffer.concat([closed(text('model', 'sora-2'), text('prompt', 'a fox')), text('model', 'sora-2-pro'), Buffer.from(`--${B}--\r\n`)]);
      let res = await post('/v1/videos', epilogue);
      expect(res.status).toBe(200);
      expect(one(seen[0]!, 'model')).toBe('sora-2');
      expect(seen[0]!.fields.get('prompt')).toEqual(['a fox']);
      expect(before - (await quota())).toBe(Q(PRICE['sora-2']! * 4));
      // RFC 2231 name*=: read as `seconds` here, written as name="seconds" upstream.
      seen.length = 0;
      const mid = await quota();
      res = await post('/v1/videos', closed(text('prompt', 'a fox'), part("name*=UTF-8''seconds", '8')));
      expect(res.status).toBe(200);
      expect(one(seen[0]!, 'seconds')).toBe('8');
      expect(mid - (await quota())).toBe(Q(PRICE['sora-2']! * 8));
      // A model sent as a file is refused (another parser may read it as the field).
      seen.length = 0;
      const last = await quota();
      res = await post('/v1/videos', closed(text('prompt', 'a fox'), part('name="model"; filename="m.txt"', 'sora-2-pro')));
      await expectRefused(res, last, /^字段 model 必须是文本字段，不能是文件$/);
    });
  });

  describe('image edits (POST /v1/images/edits)', () => {
    it('duplicate model and n (the attack on image edits) are refused; nothing is billed or sent', async () => {
      const before = await quota();
      const attack = closed(
        text('model', 'dall-e-3'),
        text('n', '1'),
        text('prompt', 'a hat'),
        part('name="image"; filename="a.png"', FILE, 'Content-Type: image/png\r\n'),
        text('n', '10'),
        text('model', 'gpt-image-1'),
      );
      await expectRefused(await post('/v1/images/edits', attack), before, DUPLICATE('n'));
      await expectRefused(await post('/v1/images/edits', closed(text('model', 'dall-e-3'), text('n', '1'), part('name=n', '10'))), before, DUPLICATE('n'));
    });

    it('n the way the upstream reads it: unquoted name=n is billed, 1e1 is sent as 10, 10abc is refused', async () => {
      let before = await quota();
      let res = await post(
        '/v1/images/edits',
        closed(text('model', 'dall-e-3'), text('prompt', 'a hat'), part('name=n', '3'), part('name="image"; filename="a.png"', FILE)),
      );
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(3);
      expect([one(seen[0]!, 'model'), one(seen[0]!, 'n')]).toEqual(['dall-e-3', '3']);
      expect(before - (await quota())).toBe(Q(PRICE['dall-e-3']! * 3));

      seen.length = 0;
      before = await quota();
      res = await post('/v1/images/edits', closed(text('model', 'dall-e-3'), text('prompt', 'a hat'), text('n', '1e1')));
      expect(res.status).toBe(200);
      expect(one(seen[0]!, 'n')).toBe('10');
      expect(before - (await quota())).toBe(Q(PRICE['dall-e-3']! * 10));

      seen.length = 0;
      before = await quota();
      for (const n of ['10abc', '0', '-5', '2.5', '']) {
        res = await post('/v1/images/edits', closed(text('model', 'dall-e-3'), text('prompt', 'a hat'), text('n', n)));
        await expectRefused(res, before, /^n 格式错误$/);
      }
    });

    it('a normal upload (the OpenAI SDK) works and is billed at the price × n the upstream sees', async () => {
      const before = await quota();
      const image = await OpenAI.toFile(BINARY, 'a.png', { type: 'image/png' });
      const res = await client.images.edit({ model: 'gpt-image-1', image, prompt: 'a hat', n: 2 });
      expect(res.data).toHaveLength(2);
      const s = seen[0]!;
      const file = s.fields.get('image')![0] as { filename: string; type: string; bytes: Buffer };
      expect(file.bytes.equals(BINARY)).toBe(true);
      expect(file.filename).toBe('a.png');
      expect(one(s, 'prompt')).toBe('a hat');
      expect(before - (await quota())).toBe(Q(PRICE[one(s, 'model')]! * Number(one(s, 'n'))));
      expect(one(s, 'model')).toBe('gpt-image-1');
    });
  });

  describe.each(['transcriptions', 'translations'])('audio %s (POST /v1/audio/…)', (endpoint) => {
    const path = `/v1/audio/${endpoint}`;

    it('a second model (quoted or not) is refused; a limited token cannot reach another model', async () => {
      const before = await quota();
      const audio = part('name="file"; filename="a.mp3"', FILE, 'Content-Type: audio/mpeg\r\n');
      await expectRefused(await post(path, closed(text('model', 'whisper-1'), audio, text('model', 'whisper-pro'))), before, DUPLICATE('model'));
      await expectRefused(await post(path, closed(text('model', 'whisper-1'), audio, part('name=model', 'whisper-pro'))), before, DUPLICATE('model'));
      const limited = await seedToken(app, userId, { model_limits: 'whisper-1' });
      await expectRefused(await post(path, closed(text('model', 'whisper-1'), audio, text('model', 'whisper-pro')), limited.key), before, DUPLICATE('model'));
      // Alone and unquoted, the model is seen and the limit applies to it.
      const res = await post(path, closed(part('name=model', 'whisper-pro'), audio), limited.key);
      expect(res.status).toBe(403);
      expect(await quota()).toBe(before);
      expect(seen).toHaveLength(0);
    });

    it('malformed bodies get a 400 in the OpenAI shape and change nothing', async () => {
      const before = await quota();
      const ok = [text('model', 'whisper-1'), part('name="file"; filename="a.mp3"', FILE)];
      const cases: Array<[Buffer, string, RegExp]> = [
        // no closing delimiter
        [Buffer.concat(ok), CTYPE, MALFORMED],
        // no boundary parameter
        [closed(...ok), 'multipart/form-data', MALFORMED],
        // a part without a name
        [closed(...ok, part('filename="b.mp3"', 'x')), CTYPE, MALFORMED],
        // a transfer encoding (RFC 7578 forbids it; some parsers decode it)
        [
          closed(part('name="model"', 'd2hpc3Blci1wcm8=', 'Content-Transfer-Encoding: base64\r\n'), ok[1]!),
          CTYPE,
          /^multipart\/form-data 的部分不能使用 Content-Transfer-Encoding/,
        ],
        // too many parts
        [closed(...ok, ...Array.from({ length: 300 }, (_, i) => text(`x${i}`, 'y'))), CTYPE, /^multipart\/form-data 请求体的部分超过 256 个$/],
        // an empty body
        [Buffer.alloc(0), CTYPE, MALFORMED],
      ];
      for (const [body, ctype, message] of cases) await expectRefused(await post(path, body, key, ctype), before, message);
    });

    it('a normal upload (the OpenAI SDK) works; billed at the model the upstream sees', async () => {
      const cost: Record<string, number> = {};
      for (const model of ['whisper-1', 'whisper-pro']) {
        seen.length = 0;
        const before = await quota();
        const file = await OpenAI.toFile(BINARY, 'a.mp3', { type: 'audio/mpeg' });
        const res =
          endpoint === 'transcriptions'
            ? await client.audio.transcriptions.create({ model, file, language: 'en' })
            : await client.audio.translations.create({ model, file });
        expect(res.text).toBe('a short transcription of the upload');
        const s = seen[0]!;
        expect(one(s, 'model')).toBe(model);
        expect((s.fields.get('file')![0] as { bytes: Buffer }).bytes.equals(BINARY)).toBe(true);
        if (endpoint === 'transcriptions') expect(one(s, 'language')).toBe('en');
        cost[model] = before - (await quota());
        await flushUsage(app);
        const log = await app.knex('logs').where({ user_id: userId, type: 2 }).orderBy('id', 'desc').first();
        expect(log.model_name).toBe(model);
        expect(Number(log.quota)).toBe(cost[model]);
      }
      expect(cost['whisper-1']).toBeGreaterThan(0);
      expect(cost['whisper-pro']).toBe(cost['whisper-1']! * (RATIO['whisper-pro']! / RATIO['whisper-1']!));
    });
  });
});
