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

  test('unterminated tail is flushed at end', () => {
    expect(all(['data: a\n\ndata: b'])).toEqual([{ data: 'a' }, { data: 'b' }]);
  });
});
