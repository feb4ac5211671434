/**
 * The local token count (count_tokens without a native channel, channels' max_input_tokens, billing
 * when an upstream reports no usage) runs on the client's text in the gateway's one thread. It
 * counts as tiktoken encodes, with a merge of its own (js-tiktoken's is the reference here); a
 * long piece is merged in windows and one count merges a bounded number of bytes. Checked by the
 * counts and the budget, not by time (the bench holds the speed targets).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import { countChatPromptTokens, countTextTokens, type TokenBudget } from '../../server/src/relay/tokenizer';

/* eslint-disable @typescript-eslint/no-require-imports -- the rank files, as the gateway loads them */
const reference: Record<string, Tiktoken> = {
  'gpt-4o': new Tiktoken(require('js-tiktoken/ranks/o200k_base')),
  'gpt-3.5-turbo': new Tiktoken(require('js-tiktoken/ranks/cl100k_base')),
};
/* eslint-enable @typescript-eslint/no-require-imports */
const MODELS = Object.keys(reference);
const exact = (text: string, model = 'gpt-4o') => reference[model]!.encode(text, 'all').length;

/** A seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}
const pick = (r: () => number, from: number, count: number, n: number) =>
  Array.from({ length: n }, () => String.fromCodePoint(from + Math.floor(r() * count))).join('');

describe('countTextTokens', () => {
  const doc = fs.readFileSync(path.join(__dirname, '../../docs/formats.md'), 'utf8').slice(0, 20_000);
  const r = random(7);
  const texts: Array<[string, string]> = [
    ['English prose and Markdown', doc],
    ['code', fs.readFileSync(path.join(__dirname, '../../server/src/relay/tokenizer.ts'), 'utf8').slice(0, 8_000)],
    ['Chinese with punctuation', '网关在上游没有返回用量时，会在本地计算令牌数。流被提前截断时也是如此；'.repeat(40)],
    ['random words of 15 letters', Array.from({ length: 300 }, () => pick(r, 97, 26, 15)).join(' ')],
    ['emoji and symbols', Array.from({ length: 200 }, () => `${pick(r, 0x1f600, 80, 2)} ${pick(r, 0x2190, 100, 3)}`).join('')],
    ['special tokens (counted one each)', 'a <|endoftext|> b <|endofprompt|>c<|endoftext|>'],
    ['contractions, digits and new lines', "It's 12345 o'clock.\r\n\n  They've   paid 3.14159\t\tnow.\n"],
  ];

  it.each(texts)('counts %s as tiktoken encodes it', (_what, text) => {
    for (const model of MODELS) expect(countTextTokens(text, model)).toBe(exact(text, model));
  });

  it('merges a long piece in windows of 128 bytes, each as tiktoken merges it', () => {
    const window = 'x'.repeat(128);
    for (const model of MODELS) {
      expect(countTextTokens('x'.repeat(128 * 400), model)).toBe(400 * exact(window, model));
      expect(countTextTokens(' '.repeat(128 * 50), model)).toBe(50 * exact(' '.repeat(128), model));
    }
  });

  it('counts a long run of CJK characters by what it is, not by its length', () => {
    // No space or punctuation: one piece of 60 000 bytes, merged in windows.
    const run = pick(random(3), 0x4e00, 3000, 20_000);
    for (const model of MODELS) {
      let bySlices = 0;
      for (let i = 0; i < run.length; i += 40) bySlices += exact(run.slice(i, i + 40), model);
      const n = countTextTokens(run, model);
      expect(Math.abs(n / bySlices - 1)).toBeLessThan(0.05);
      expect(n).toBeGreaterThan(run.length / 2);
    }
  });

  it("merges at most the count's budget and counts the rest at the rate the counted part came to", () => {
    const budget: TokenBudget = { bytes: 6_000 };
    const n = countTextTokens(doc, 'gpt-4o', budget);
    expect(budget.bytes).toBe(0); // a piece is merged only as far as the budget goes
    expect(Math.abs(n / exact(doc) - 1)).toBeLessThan(0.1);
    // One piece larger than the whole budget is merged only as far as the budget goes.
    const huge: TokenBudget = { bytes: 1_280 };
    const counted = 10 * exact('x'.repeat(128)); // ten windows
    expect(countTextTokens('x'.repeat(5_000_000), 'gpt-4o', huge)).toBe(counted + Math.ceil(((5_000_000 - 1_280) * counted) / 1_280));
    expect(huge.bytes).toBe(0);
  });

  it("shares one budget between the texts of a call's prompt", () => {
    const big = fs.readFileSync(path.join(__dirname, '../../docs/formats.md'), 'utf8');
    const messages = [
      { role: 'system', content: big },
      { role: 'user', content: big },
    ];
    const n = countChatPromptTokens(messages, 'gpt-4o');
    const truth = 3 + 2 * (3 + exact(big));
    expect(Math.abs(n / truth - 1)).toBeLessThan(0.1);
    // A text past the budget is not merged at all: it counts at the rate of what the count merged.
    const zh = '网关在上游没有返回用量时，会在本地计算令牌数。'.repeat(4_000);
    const b: TokenBudget = { bytes: 48 * 1024 };
    const first = countTextTokens(zh, 'gpt-4o', b);
    expect(b.bytes).toBe(0);
    const spent = { ...b };
    expect(countTextTokens(zh, 'gpt-4o', b)).toBe(Math.ceil((zh.length * spent.tokens!) / spent.chars!));
    expect(b.tokens).toBe(spent.tokens); // nothing more merged
    expect(Math.abs(first / exact(zh) - 1)).toBeLessThan(0.05);
  });
});
