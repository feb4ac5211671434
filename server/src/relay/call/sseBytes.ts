/** Byte-level tests on upstream SSE chunks, for the OpenAI pass-through's fast path (streamBody.ts). */

const LF = 0x0a;
const CR = 0x0d;

export const endsWithBlankLine = (b: Buffer) => b.length >= 2 && b[b.length - 1] === LF && b[b.length - 2] === LF;

const USAGE_KEY = Buffer.from('"usage":');
const DONE_KEY = Buffer.from('[DONE]');

/** `needle` sits in `b` at `at` (bytes). */
function bytesAt(b: Buffer, at: number, needle: Buffer): boolean {
  if (at + needle.length > b.length) return false;
  for (let j = 0; j < needle.length; j++) if (b[at + j] !== needle[j]) return false;
  return true;
}

/**
 * Whole SSE blocks that the pass-through forwards unchanged: the chunk ends a block, has no CR, no
 * `[DONE]` (held back until billed) and no usage object (`"usage":null`, which every chunk carries
 * when usage is asked for, passes). One pass over the bytes: three Buffer searches cost a native
 * call each, more than reading a frame's few hundred bytes here.
 */
export function passesAsBytes(chunk: Buffer): boolean {
  const n = chunk.length;
  if (n < 2 || chunk[n - 1] !== LF || chunk[n - 2] !== LF) return false;
  // Each line must open like SSE (`data: {`, `data: [`, `event:`, `id:`, `retry:`, `:`, blank) and
  // a data line end like JSON: anything else (garbage, a truncated object) takes the checked path.
  let lineStart = true;
  let inData = false;
  for (let i = 0; i < n; i++) {
    const c = chunk[i];
    if (lineStart) {
      lineStart = false;
      if (c === 0x64 /* d */) {
        let j = i + 5;
        if (chunk[i + 4] !== 0x3a /* : */ || chunk[i + 1] !== 0x61) return false;
        if (chunk[j] === 0x20) j++;
        if (chunk[j] !== 0x7b /* { */ && chunk[j] !== 0x5b /* [ */) return false;
        inData = true;
      } else if (c !== 0x65 /* e */ && c !== 0x3a /* : */ && c !== LF && c !== 0x69 /* i */ && c !== 0x72 /* r */) return false;
    }
    if (c === LF) {
      if (inData) {
        const p = chunk[i - 1];
        if (p !== 0x7d /* } */ && p !== 0x5d /* ] */) return false;
        inData = false;
      }
      lineStart = true;
      continue;
    }
    if (c === CR) return false;
    if (c === 0x5b /* [ */ && bytesAt(chunk, i, DONE_KEY)) return false;
    if (c === 0x22 /* " */ && chunk[i + 1] === 0x75 /* u */ && bytesAt(chunk, i, USAGE_KEY)) {
      i += USAGE_KEY.length;
      while (chunk[i] === 0x20) i++;
      if (chunk[i] !== 0x6e /* n(ull) */) return false;
    }
  }
  return true;
}

/** The OpenAI usage-only chunk (`choices: []` with a usage object). */
export function isUsageOnlyChunk(data: string): boolean {
  // Chunks carry `"usage":null` when usage is requested: only a real usage object is worth parsing.
  if (!data.includes('"usage":{') && !data.includes('"usage": {')) return false;
  try {
    const o = JSON.parse(data) as { choices?: unknown[]; usage?: unknown };
    return !!o.usage && Array.isArray(o.choices) && o.choices.length === 0;
  } catch {
    return false;
  }
}
