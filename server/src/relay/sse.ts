import type { SSEEvent } from './types';

/**
 * Splits an SSE byte stream into complete event blocks (each with its trailing blank line), keeping
 * the original text so blocks can be forwarded untouched.
 */
export class SSESplitter {
  private buf = '';
  private readonly decoder = new TextDecoder();

  /** A CR at the end of the previous chunk (its LF may open the next one). */
  private pendingCR = false;

  push(chunk: Uint8Array): string[] {
    let text = this.decoder.decode(chunk, { stream: true });
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
    this.buf += text;
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const i = this.buf.indexOf('\n\n', start);
      if (i < 0) break;
      out.push(this.buf.slice(start, i + 2));
      start = i + 2;
    }
    if (start) this.buf = this.buf.slice(start);
    return out;
  }

  /** The unterminated tail, if any (a stream that ended without a blank line). */
  end(): string[] {
    const tail = (this.buf + this.decoder.decode() + (this.pendingCR ? '\n' : '')).trim();
    this.pendingCR = false;
    this.buf = '';
    return tail ? [`${tail}\n\n`] : [];
  }
}

/** Parses one block; null for comments/keep-alives without data. */
export function parseBlock(block: string): SSEEvent | null {
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
  }
  if (data === undefined) return null;
  return event ? { event, data } : { data };
}

export const sseData = (json: unknown) => `data: ${JSON.stringify(json)}\n\n`;
