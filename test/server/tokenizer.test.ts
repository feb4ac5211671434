/**
 * The local token count (count_tokens without a native channel, channels' max_input_tokens, billing
 * when an upstream reports no usage) runs on the client's text in the gateway's one thread. The
 * encoder's merge is quadratic in the length of one word, so long runs count by their length and
 * one count encodes a bounded number of characters. Checked by what reaches the encoder, not by
 * time (the bench holds the speed targets).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import { countChatPromptTokens, countTextTokens } from '../../server/src/relay/tokenizer';

/** An encoder of our own with the ranks the gateway loads for gpt-4o: the exact count. */
const reference = new Tiktoken(require('js-tiktoken/ranks/o200k_base')); // eslint-disable-line @typescript-eslint/no-require-imports -- as the gateway loads them
const exact = (text: string) => reference.encode(text, 'all').length;

describe('countTextTokens', () => {
  let encoded: string[];
  let spy: jest.SpyInstance;
  beforeEach(() => {
    encoded = [];
    const encode = Tiktoken.prototype.encode;
    spy = jest.spyOn(Tiktoken.prototype, 'encode').mockImplementation(function (this: Tiktoken, text: string, ...rest: any[]) {
      if (this !== reference) encoded.push(text); // the gateway's encoder
      return encode.call(this, text, ...rest);
    });
  });
  afterEach(() => spy.mockRestore());
  const charsEncoded = () => encoded.reduce((n, t) => n + t.length, 0);

  it('counts ordinary text as the encoder does', () => {
    const text = 'The gateway counts tokens locally when an upstream reports no usage, e.g. for a stream cut short.';
    expect(countTextTokens(text, 'gpt-4o')).toBe(exact(text));
    expect(encoded.join('')).toBe(text);
  });

  it.each([
    ['a 100 000-letter word', 'x'.repeat(100_000)],
    ['a run of punctuation', '!'.repeat(50_000)],
    ['a run of spaces', ' '.repeat(50_000)],
  ])('counts %s by its length, without encoding it', (_what, run) => {
    expect(countTextTokens(`before ${run} after`, 'gpt-4o')).toBe(exact('before ') + run.length / 4 + exact(' after'));
    expect(encoded.every((t) => t.length < 16)).toBe(true);
  });

  it("encodes at most 16 000 characters of one call's prompt, and counts the rest at the encoded rate", () => {
    const doc = fs.readFileSync(path.join(__dirname, '../../docs/formats.md'), 'utf8');
    const messages = [
      { role: 'system', content: doc },
      { role: 'user', content: doc },
    ];
    const n = countChatPromptTokens(messages, 'gpt-4o');
    expect(charsEncoded()).toBeLessThanOrEqual(16_000);
    expect(charsEncoded()).toBeGreaterThan(15_000);
    const truth = 3 + 2 * (3 + exact(doc));
    expect(Math.abs(n / truth - 1)).toBeLessThan(0.1);
  });

  it('charges each encoder call at least 32 characters, so many short pieces cannot run it unbounded', () => {
    const text = `${'a'.repeat(20)} `.repeat(5_000); // 20-letter words: each a long run, with a space between
    countTextTokens(text, 'gpt-4o');
    expect(encoded.length).toBeLessThanOrEqual(16_000 / 32);
  });
});
