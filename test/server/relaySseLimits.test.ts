import { parseBlock, SSEEventTooLarge, SSESplitter } from '../../server/src/relay/sse';
import { EventStreamParser } from '../../server/src/channels/providers/eventstream';
import { encodeFrame } from '../mock-upstream/bedrock';

/** Unit tests of the stream splitters' cap and linear splitting (no DB). */
describe('relay SSE splitter: cap and linear splitting', () => {
  const text =
    'event: a\ndata: {"x":1}\n\n: keep-alive\n\ndata: {"t":"你好，世界 ✓"}\n\n\n' + `data: {"big":"${'y'.repeat(70_000)}"}\n\nid: 7\ndata: [DONE]\n\n`;

  const split = (bytes: Buffer, size: number) => {
    const s = new SSESplitter();
    const out: string[] = [];
    for (let i = 0; i < bytes.length; i += size) out.push(...s.push(bytes.subarray(i, i + size)));
    out.push(...s.end());
    return out;
  };

  test('1-byte chunks, odd-sized chunks and one big chunk give identical blocks (LF and CRLF)', () => {
    for (const t of [text, text.replace(/\n/g, '\r\n')]) {
      const bytes = Buffer.from(t);
      const whole = split(bytes, bytes.length);
      expect(whole.map((b) => parseBlock(b)).filter(Boolean)).toHaveLength(4);
      expect(split(bytes, 1)).toEqual(whole);
      expect(split(bytes, 7)).toEqual(whole);
      expect(split(bytes, 4096)).toEqual(whole);
    }
  });

  test('splitting is linear: 200 000 small chunks of one event scan each character once', () => {
    let scanned = 0;
    const s = new SSESplitter(4 * 1024 * 1024, (n) => (scanned += n));
    const piece = Buffer.from('0123456789');
    const head = Buffer.from('data: {"v":"');
    let total = head.length;
    expect(s.push(head)).toEqual([]);
    let early = 0;
    for (let i = 0; i < 200_000; i++) {
      early += s.push(piece).length;
      total += piece.length;
    }
    expect(early).toBe(0);
    const out = s.push(Buffer.from('"}\n\n'));
    total += 4;
    expect(out).toHaveLength(1);
    expect(out[0]!.length).toBe(total);
    expect(scanned).toBe(total); // a rescan of the buffer per chunk would be ≈ 2·10¹¹
  });

  test('an event past the cap throws once it crosses the cap, holding no more than the cap and one chunk', () => {
    const cap = 64 * 1024;
    const s = new SSESplitter(cap);
    const piece = Buffer.alloc(1000, 'x');
    s.push(Buffer.from('data: '));
    let pushed = 6;
    let err: unknown;
    try {
      for (let i = 0; i < 20_000; i++) {
        s.push(piece);
        pushed += piece.length;
      }
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SSEEventTooLarge);
    expect(pushed).toBeLessThanOrEqual(cap + piece.length);
    // A blank line earlier resets the count: events under the cap pass one after another.
    const ok = new SSESplitter(cap);
    for (let i = 0; i < 100; i++) expect(ok.push(Buffer.from(`data: ${'z'.repeat(60_000)}\n\n`))).toHaveLength(1);
  });
});

describe('event-stream parser: cap and linear collection', () => {
  const frame = (n: number) =>
    encodeFrame({ ':message-type': 'event', ':event-type': 'chunk' }, Buffer.from(JSON.stringify({ bytes: Buffer.from('z'.repeat(n)).toString('base64') })));

  test('frames split into 1-byte chunks parse like whole ones', () => {
    const bytes = Buffer.concat([frame(10), frame(5000), frame(3)]);
    const whole = new EventStreamParser().push(bytes);
    const p = new EventStreamParser();
    const out = [];
    for (let i = 0; i < bytes.length; i++) out.push(...p.push(bytes.subarray(i, i + 1)));
    expect(out).toEqual(whole);
    expect(out).toHaveLength(3);
    expect(p.pending()).toBe(0);
  });

  test('a frame announcing more than the cap is refused from its prelude', () => {
    const big = frame(200_000);
    const p = new EventStreamParser(100_000);
    expect(() => p.push(big.subarray(0, 12))).toThrow(SSEEventTooLarge);
  });
});
