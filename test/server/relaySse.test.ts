import { parseBlock, SSESplitter } from '../../server/src/relay/sse';

/** Pure unit tests of the SSE splitter (no DB). */
describe('relay SSE splitter', () => {
  const all = (parts: string[]) => {
    const s = new SSESplitter();
    const out: string[] = [];
    for (const p of parts) out.push(...s.push(Buffer.from(p)));
    out.push(...s.end());
    return out.map((b) => parseBlock(b)).filter(Boolean);
  };

  test('LF and CRLF streams split at any byte give the same events', () => {
    const lf = 'event: a\ndata: {"x":1}\n\ndata: two\ndata: lines\n\n: comment\n\ndata: [DONE]\n\n';
    const crlf = lf.replace(/\n/g, '\r\n');
    const expected = [{ event: 'a', data: '{"x":1}' }, { data: 'two\nlines' }, { data: '[DONE]' }];
    for (const text of [lf, crlf]) {
      expect(all([text])).toEqual(expected);
      for (let cut = 1; cut < text.length; cut++) expect(all([text.slice(0, cut), text.slice(cut)])).toEqual(expected);
    }
  });

  test('multi-byte UTF-8 split across chunks survives', () => {
    const bytes = Buffer.from('data: 你好，世界\n\n');
    const s = new SSESplitter();
    const out = [...s.push(bytes.subarray(0, 8)), ...s.push(bytes.subarray(8))];
    expect(parseBlock(out[0]!)).toEqual({ data: '你好，世界' });
  });

  // ASCII chunks skip the decoder (read as Latin-1) unless it may hold part of a character: the
  // text must be the decoder's for the whole stream, wherever the chunks are cut.
  test('text is what one decoder gives for the whole stream, at every three-piece cut', () => {
    const streams = [
      Buffer.from('data: {"a":"x"}\n\ndata: {"b":"你好"}\n\ndata: {"c":"😀 y"}\n\n'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: bom first\n\ndata: ok\n\n')]),
      Buffer.concat([Buffer.from('data: a\n\ndata: '), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('kept\n\n')]),
      Buffer.concat([Buffer.from('data: bad '), Buffer.from([0xe4, 0xbd]), Buffer.from(' cut\n\ndata: '), Buffer.from([0x80]), Buffer.from('x\n\n')]),
    ];
    for (const bytes of streams) {
      const expected = new TextDecoder().decode(bytes);
      for (let i = 0; i <= bytes.length; i++)
        for (let j = i; j <= bytes.length; j++) {
          const s = new SSESplitter();
          // a Uint8Array that is not a Buffer too (as a decoder may hand over)
          const pieces = [bytes.subarray(0, i), new Uint8Array(bytes.subarray(i, j)), bytes.subarray(j)];
          const got = [...pieces.flatMap((p) => s.push(p)), ...s.end()].join('');
          if (got !== expected) throw new Error(`cut at ${i}/${j}: ${JSON.stringify(got)} ≠ ${JSON.stringify(expected)}`);
        }
    }
  });

  test('unterminated tail is flushed at end', () => {
    expect(all(['data: a\n\ndata: b'])).toEqual([{ data: 'a' }, { data: 'b' }]);
  });
});
