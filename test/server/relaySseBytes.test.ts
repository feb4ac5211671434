import { endsWithBlankLine, isUsageOnlyChunk, passesAsBytes } from '../../server/src/relay/call/sseBytes';

const b = (s: string) => Buffer.from(s);

describe('OpenAI pass-through fast path: chunks forwarded as received', () => {
  test('whole data blocks without usage, [DONE] or CR pass', () => {
    expect(passesAsBytes(b('data: {"choices":[{"delta":{"content":"hi"}}]}\n\n'))).toBe(true);
    expect(passesAsBytes(b('data: {"a":1}\n\ndata: {"b":2}\n\n'))).toBe(true);
    expect(passesAsBytes(b('data:{"a":1}\n\n'))).toBe(true);
    expect(passesAsBytes(b('event: x\ndata: [1]\n\n'))).toBe(true);
    expect(passesAsBytes(b(': comment\n\n'))).toBe(true);
    // Every chunk carries `"usage":null` once usage is asked for: that is no usage object.
    expect(passesAsBytes(b('data: {"choices":[],"usage":null}\n\n'))).toBe(true);
    expect(passesAsBytes(b('data: {"choices":[],"usage": null}\n\n'))).toBe(true);
  });

  test('anything that needs the checked path does not', () => {
    expect(passesAsBytes(b('data: {"a":1}\n'))).toBe(false); // block not ended
    expect(passesAsBytes(b('data: {"a":1}'))).toBe(false);
    expect(passesAsBytes(b('data: [DONE]\n\n'))).toBe(false); // held back until billed
    expect(passesAsBytes(b('data: {"choices":[],"usage":{"prompt_tokens":1}}\n\n'))).toBe(false);
    expect(passesAsBytes(b('data: {"a":1}\r\n\r\n'))).toBe(false); // CRLF streams
    expect(passesAsBytes(b('garbage\n\n'))).toBe(false); // not an SSE line
    expect(passesAsBytes(b('data: hello\n\n'))).toBe(false); // data that cannot be JSON
    expect(passesAsBytes(b('data: {"a":1\n\n'))).toBe(false); // truncated object
    expect(passesAsBytes(b('\n'))).toBe(false);
  });

  test('endsWithBlankLine', () => {
    expect(endsWithBlankLine(b('data: {}\n\n'))).toBe(true);
    expect(endsWithBlankLine(b('data: {}\n'))).toBe(false);
    expect(endsWithBlankLine(b('\n'))).toBe(false);
  });

  test('the usage-only chunk is told apart from chunks that carry usage null or choices', () => {
    expect(isUsageOnlyChunk('{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}')).toBe(true);
    expect(isUsageOnlyChunk('{"choices":[], "usage": {"prompt_tokens":1}}')).toBe(true);
    expect(isUsageOnlyChunk('{"choices":[{"delta":{}}],"usage":{"prompt_tokens":1}}')).toBe(false);
    expect(isUsageOnlyChunk('{"choices":[],"usage":null}')).toBe(false);
    expect(isUsageOnlyChunk('{"usage":{ broken')).toBe(false);
  });
});
