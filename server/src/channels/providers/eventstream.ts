/**
 * AWS event-stream binary framing (`application/vnd.amazon.eventstream`), as Bedrock's
 * `invoke-with-response-stream` answers. One message:
 *
 *   total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (u32 BE)
 *   headers (name len u8, name, value type u8, value …) | payload | message CRC32 (u32 BE)
 *
 * Bedrock events: `:message-type` = `event`, `:event-type` = `chunk`, payload
 * `{"bytes":"<base64 of one Claude stream event JSON>"}`; errors: `:message-type` = `exception`,
 * `:exception-type` = `throttlingException` …, payload `{"message":"…"}`.
 *
 * The decoder turns frames into SSE text blocks (`event: <type>\ndata: <json>\n\n`), i.e. the
 * Claude SSE stream, so the relay's Claude stream translator (or a Claude client, in passthrough)
 * reads them unchanged. Exceptions become a Claude `error` event.
 */

import { DEFAULT_MAX_SSE_EVENT_BYTES, SSEEventTooLarge } from '../../relay/sse';

export type HeaderValue = string | number | boolean | bigint | Buffer | Date;

export interface EventStreamMessage {
  headers: Record<string, HeaderValue>;
  payload: Buffer;
}

const CRC_TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  return t;
})();

export function crc32(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = -1;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

export class EventStreamError extends Error {}

function parseHeaders(b: Buffer): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  let p = 0;
  const need = (n: number) => {
    if (p + n > b.length) throw new EventStreamError('event-stream: truncated header');
  };
  while (p < b.length) {
    need(1);
    const nameLen = b.readUInt8(p);
    p += 1;
    need(nameLen + 1);
    const name = b.toString('utf8', p, p + nameLen);
    p += nameLen;
    const type = b.readUInt8(p);
    p += 1;
    let value: HeaderValue;
    switch (type) {
      case 0:
        value = true;
        break;
      case 1:
        value = false;
        break;
      case 2:
        need(1);
        value = b.readInt8(p);
        p += 1;
        break;
      case 3:
        need(2);
        value = b.readInt16BE(p);
        p += 2;
        break;
      case 4:
        need(4);
        value = b.readInt32BE(p);
        p += 4;
        break;
      case 5:
        need(8);
        value = b.readBigInt64BE(p);
        p += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const len = b.readUInt16BE(p);
        p += 2;
        need(len);
        value = type === 7 ? b.toString('utf8', p, p + len) : Buffer.from(b.subarray(p, p + len));
        p += len;
        break;
      }
      case 8:
        need(8);
        value = new Date(Number(b.readBigInt64BE(p)));
        p += 8;
        break;
      case 9:
        need(16);
        value = b.subarray(p, p + 16).toString('hex');
        p += 16;
        break;
      default:
        throw new EventStreamError(`event-stream: unknown header type ${type}`);
    }
    out[name] = value;
  }
  return out;
}

/**
 * Incremental frame parser: push bytes, get the complete messages (CRCs checked). Chunks of an
 * unfinished frame are kept in a list and joined once the frame is complete (linear in the bytes),
 * and a frame announcing more than `maxFrameBytes` is refused before it is buffered.
 */
export class EventStreamParser {
  private parts: Buffer[] = [];
  private size = 0;
  /** Length of the frame being collected, once its prelude is in (0: not known yet). */
  private need = 0;

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_SSE_EVENT_BYTES) {}

  push(chunk: Uint8Array): EventStreamMessage[] {
    this.parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    this.size += chunk.length;
    if (this.size < 12 || (this.need && this.size < this.need)) return [];
    const buf = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    const out: EventStreamMessage[] = [];
    let off = 0;
    this.need = 0;
    while (buf.length - off >= 12) {
      const total = buf.readUInt32BE(off);
      const headersLen = buf.readUInt32BE(off + 4);
      if (crc32(buf, off, off + 8) !== buf.readUInt32BE(off + 8)) throw new EventStreamError('event-stream: prelude CRC mismatch');
      if (total < 16 || headersLen > total - 16) throw new EventStreamError('event-stream: bad lengths');
      if (total > this.maxFrameBytes) throw new SSEEventTooLarge(this.maxFrameBytes);
      if (buf.length - off < total) {
        this.need = total;
        break;
      }
      if (crc32(buf, off, off + total - 4) !== buf.readUInt32BE(off + total - 4)) throw new EventStreamError('event-stream: message CRC mismatch');
      const headers = parseHeaders(buf.subarray(off + 12, off + 12 + headersLen));
      const payload = Buffer.from(buf.subarray(off + 12 + headersLen, off + total - 4));
      out.push({ headers, payload });
      off += total;
    }
    const rest = off ? buf.subarray(off) : buf;
    this.parts = rest.length ? [rest] : [];
    this.size = rest.length;
    return out;
  }

  /** Bytes left over (a stream that ended mid-frame). */
  pending(): number {
    return this.size;
  }
}

const EXCEPTION_TYPES: Record<string, string> = {
  throttlingException: 'rate_limit_error',
  serviceUnavailableException: 'overloaded_error',
  modelStreamErrorException: 'api_error',
  internalServerException: 'api_error',
  validationException: 'invalid_request_error',
  modelTimeoutException: 'api_error',
};

function errorBlock(type: string, message: string): string {
  return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
}

/**
 * Bedrock event-stream → Claude SSE blocks (the relay's stream splitter interface: push bytes →
 * SSE text blocks, end → the tail).
 */
export class BedrockStreamDecoder {
  private readonly parser: EventStreamParser;

  constructor(maxFrameBytes?: number) {
    this.parser = new EventStreamParser(maxFrameBytes);
  }

  push(chunk: Uint8Array): string[] {
    const out: string[] = [];
    for (const m of this.parser.push(chunk)) {
      const kind = m.headers[':message-type'];
      let body: Record<string, unknown> = {};
      try {
        const j = JSON.parse(m.payload.toString('utf8'));
        if (j && typeof j === 'object') body = j as Record<string, unknown>;
      } catch {
        /* empty or non-JSON payload */
      }
      if (kind === 'exception' || kind === 'error') {
        const ex = String(m.headers[':exception-type'] ?? m.headers[':error-code'] ?? 'internalServerException');
        const msg =
          typeof body.message === 'string' ? body.message : typeof body.Message === 'string' ? body.Message : String(m.headers[':error-message'] ?? ex);
        out.push(errorBlock(EXCEPTION_TYPES[ex] ?? 'api_error', msg));
        continue;
      }
      if (typeof body.bytes !== 'string') continue;
      const json = Buffer.from(body.bytes, 'base64').toString('utf8');
      let ev: { type?: unknown };
      try {
        ev = JSON.parse(json) as { type?: unknown };
      } catch {
        continue;
      }
      const line = JSON.stringify(ev); // one line, whatever the upstream's formatting
      out.push(typeof ev?.type === 'string' ? `event: ${ev.type}\ndata: ${line}\n\n` : `data: ${line}\n\n`);
    }
    return out;
  }

  end(): string[] {
    return this.parser.pending() ? [errorBlock('api_error', 'event-stream ended mid-frame')] : [];
  }
}

export const EVENTSTREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';
