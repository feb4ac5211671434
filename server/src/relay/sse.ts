import { isAscii } from 'node:buffer';
import type { SSEEvent } from './types';
import { msg, t, type Message } from '../i18n';

/** Default cap on one SSE event (and one event-stream frame) read from an upstream: 4 MiB. */
export const DEFAULT_MAX_SSE_EVENT_BYTES = 4 * 1024 * 1024;

/** One upstream event larger than the cap: the stream is ended with an error, nothing more is buffered. */
export class SSEEventTooLarge extends Error {
  readonly code = 'upstream_event_too_large';
  readonly msg: Message;
  constructor(readonly limit: number) {
    const m = msg('upstream.event_too_large', { limit });
    super(t('en', m));
    this.msg = m;
  }
}

/**
 * Splits an SSE byte stream into complete event blocks (each with its trailing blank line), keeping
 * the original text so blocks can be forwarded untouched.
 *
 * Linear in the bytes pushed: each chunk's text is scanned once (plus the one character before it,
 * for a blank line split across chunks), the text of an unfinished event is kept as a list of
 * pieces and joined once when its blank line arrives. An event that grows past `maxEventBytes`
 * (counted in characters of decoded text, which are never more than its bytes) throws
 * SSEEventTooLarge instead of buffering more.
 */
export class SSESplitter {
  /** Text of the unfinished event, in pieces. */
  private parts: string[] = [];
  private partsLen = 0;
  /** The buffered text ends with a LF (a blank line may complete with the next chunk's first LF). */
  private endsWithLF = false;
  /**
   * Made for the first chunk that is not ASCII (most streams never need one). At the stream's
   * start it drops a BOM; made later, it keeps one, as one decoder of the whole stream would.
   */
  private decoder: TextDecoder | undefined;
  /** Some bytes came: a BOM now is text, not a mark. */
  private started = false;
  /**
   * The decoder may hold the start of a character: the next chunk must go through it. Otherwise
   * an ASCII chunk is read as Latin-1, the same text without the decoder's detour through UTF-16
   * (most of an SSE stream is ASCII; an ASCII first chunk cannot start with a BOM).
   */
  private viaDecoder = false;

  /** A CR at the end of the previous chunk (its LF may open the next one). */
  private pendingCR = false;

  constructor(
    private readonly maxEventBytes = DEFAULT_MAX_SSE_EVENT_BYTES,
    /** Test hook: told how many characters each push scanned. */
    private readonly onScan?: (chars: number) => void,
  ) {}

  push(chunk: Uint8Array): string[] {
    const ascii = isAscii(chunk);
    let text: string;
    if (ascii && !this.viaDecoder) text = latin1(chunk);
    else {
      this.decoder ??= new TextDecoder('utf-8', { ignoreBOM: this.started });
      text = this.decoder.decode(chunk, { stream: true });
      if (chunk.length) this.viaDecoder = !ascii;
    }
    if (chunk.length) this.started = true;
    if (this.pendingCR) {
      text = `\r${text}`;
      this.pendingCR = false;
    }
    if (text.includes('\r')) {
      if (text.endsWith('\r')) {
        this.pendingCR = true;
        text = text.slice(0, -1);
      }
      text = text.replace(/\r\n?/g, '\n');
    }
    if (!text) return NONE;
    this.onScan?.(text.length);
    let out: string[] | undefined;
    let start = 0;
    // A blank line split across chunks: the kept text ends with LF and this one starts with LF.
    if (this.endsWithLF && text.charCodeAt(0) === 10 && this.partsLen) {
      (out ??= []).push(this.take('\n'));
      start = 1;
    }
    for (;;) {
      const i = text.indexOf('\n\n', start);
      if (i < 0) break;
      const piece = text.slice(start, i + 2);
      (out ??= []).push(this.partsLen ? this.take(piece) : piece);
      start = i + 2;
    }
    if (start < text.length) {
      const rest = start ? text.slice(start) : text;
      this.parts.push(rest);
      this.partsLen += rest.length;
      this.endsWithLF = rest.charCodeAt(rest.length - 1) === 10;
      if (this.partsLen > this.maxEventBytes) {
        this.parts = [];
        this.partsLen = 0;
        throw new SSEEventTooLarge(this.maxEventBytes);
      }
    } else this.endsWithLF = false;
    return out ?? NONE;
  }

  /** The kept pieces plus `last`, as one block; the buffer is empty afterwards. */
  private take(last: string): string {
    const parts = this.parts;
    parts.push(last);
    const block = parts.length === 2 ? parts[0]! + parts[1]! : parts.join('');
    this.parts = [];
    this.partsLen = 0;
    this.endsWithLF = false;
    return block;
  }

  /** The unterminated tail, if any (a stream that ended without a blank line). */
  end(): string[] {
    const tail = (this.parts.join('') + (this.decoder?.decode() ?? '') + (this.pendingCR ? '\n' : '')).trim();
    this.pendingCR = false;
    this.parts = [];
    this.partsLen = 0;
    this.endsWithLF = false;
    return tail ? [`${tail}\n\n`] : [];
  }
}

const NONE: string[] = [];

function latin1(chunk: Uint8Array): string {
  return (Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)).toString('latin1');
}

/** An upstream stream frame that is not SSE, or whose data is not JSON: the stream cannot be read. */
export class BadStreamFrame extends Error {
  readonly code = 'bad_stream_frame';
  readonly msg: Message = msg('upstream.bad_stream');
  constructor() {
    super(t('en', 'upstream.bad_stream'));
  }
}

/** Parses one block; null for comments/keep-alives without data. */
export function parseBlock(block: string): SSEEvent | null {
  return parseBlockChecked(block) || null;
}

/**
 * Data that can be JSON (or the `[DONE]` marker, or empty): first character `{`/`[`, last `}`/`]`.
 * A cheap first filter for frames the relay does not decode (garbage such as NUL bytes or a
 * truncated object fails it); the frames it decodes also fail on JSON.parse.
 */
export function jsonShaped(data: string): boolean {
  const n = data.length;
  if (!n || data === '[DONE]') return true;
  const a = data.charCodeAt(0);
  if (a !== 123 && a !== 91) return false;
  let e = n - 1;
  let z = data.charCodeAt(e);
  while ((z === 32 || z === 10 || z === 9) && e > 0) z = data.charCodeAt(--e);
  return z === 125 || z === 93;
}

/** Like parseBlock, but false for a block with a line that is not SSE (unknown field: garbage). */
export function parseBlockChecked(block: string): SSEEvent | null | false {
  let data: string | undefined;
  let event: string | undefined;
  let pos = 0;
  while (pos < block.length) {
    let nl = block.indexOf('\n', pos);
    if (nl < 0) nl = block.length;
    const line = block.slice(pos, nl);
    pos = nl + 1;
    if (!line || line.charCodeAt(0) === 58 /* : */) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'event') event = value;
    else if (field !== 'id' && field !== 'retry') return false;
  }
  if (data === undefined) return null;
  return event ? { event, data } : { data };
}

export const sseData = (json: unknown) => `data: ${JSON.stringify(json)}\n\n`;
