/**
 * AWS Bedrock streaming on the mock upstream (needs installClaudeMock on the same mock):
 * `POST /model/{modelId}/invoke-with-response-stream`, SigV4 header required, body with
 * `anthropic_version: bedrock-2023-05-31` and neither `model` nor `stream`. The Claude mock's SSE
 * answer (`/v1/messages`, stream) is re-framed as AWS event-stream messages (`:event-type` chunk,
 * payload `{"bytes": base64(event JSON)}`), written a few bytes at a time so frames straddle reads.
 * A model id containing `throttle` gets only a `throttlingException` frame (before any event).
 *
 * `encodeFrame` is an independent encoder of the framing (used by the parser's unit tests too).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { MockRequest, MockUpstream } from './index';

const CRC = (() => {
  const t: number[] = [];
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t.push(c >>> 0);
  }
  return t;
})();
function crc(b: Buffer): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One event-stream message with string headers (type 7) and optional extra typed headers. */
export function encodeFrame(headers: Record<string, string | number | boolean>, payload: Buffer | string): Buffer {
  const hs: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    let v: Buffer;
    if (typeof value === 'string') {
      const s = Buffer.from(value, 'utf8');
      v = Buffer.alloc(3 + s.length);
      v.writeUInt8(7, 0);
      v.writeUInt16BE(s.length, 1);
      s.copy(v, 3);
    } else if (typeof value === 'boolean') v = Buffer.from([value ? 0 : 1]);
    else {
      v = Buffer.alloc(5);
      v.writeUInt8(4, 0);
      v.writeInt32BE(value, 1);
    }
    hs.push(Buffer.from([n.length]), n, v);
  }
  const h = Buffer.concat(hs);
  const p = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const total = 12 + h.length + p.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(h.length, 4);
  prelude.writeUInt32BE(crc(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, h, p]);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc(body), 0);
  return Buffer.concat([body, tail]);
}

export const chunkFrame = (event: unknown) =>
  encodeFrame(
    { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
    JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcd' }),
  );

export const exceptionFrame = (type: string, message: string) =>
  encodeFrame({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }));

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** POSTs to the Claude mock and collects its SSE events' data. */
function claudeEvents(mock: MockUpstream, body: unknown): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const r = http.request(
      `${mock.url}/v1/messages`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'bedrock-forward',
          'anthropic-version': '2023-06-01',
          'content-length': Buffer.byteLength(text),
        },
      },
      (up) => {
        const parts: Buffer[] = [];
        up.on('data', (c: Buffer) => parts.push(c));
        up.on('end', () => {
          const events = Buffer.concat(parts)
            .toString('utf8')
            .split('\n\n')
            .map((b) => /^data: (.*)$/m.exec(b)?.[1])
            .filter((d): d is string => !!d)
            .map((d) => JSON.parse(d));
          resolve(events);
        });
        up.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(text);
  });
}

export function installBedrockStreamMock(mock: MockUpstream): void {
  mock.route('POST', /^\/model\/[^/]+\/invoke-with-response-stream$/, async (req: MockRequest, res) => {
    const auth = String(req.headers.authorization ?? '');
    if (!auth.startsWith('AWS4-HMAC-SHA256 Credential=') || !req.headers['x-amz-date']) return send(res, 403, { message: 'Missing Authentication Token' });
    const body = req.json as Record<string, unknown> | undefined;
    if (!body || body.anthropic_version !== 'bedrock-2023-05-31' || 'model' in body || 'stream' in body)
      return send(res, 400, { message: 'Malformed input request' });
    const modelId = decodeURIComponent(req.path.split('/')[2]!);
    const { anthropic_version: _v, ...rest } = body;
    const events = await claudeEvents(mock, { ...rest, model: modelId, stream: true });
    const frames: Buffer[] = [];
    events.forEach((ev, i) => {
      if (modelId.includes('throttle')) {
        if (i === 0) frames.push(exceptionFrame('throttlingException', 'Too many requests, please wait before trying again.'));
      } else frames.push(chunkFrame(ev));
    });
    const all = Buffer.concat(frames);
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': crypto.randomUUID() });
    // odd-sized writes: frames straddle the reads on the other side
    for (let i = 0; i < all.length; i += 37) {
      res.write(all.subarray(i, i + 37));
      if (i % (37 * 8) === 0) await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
}
