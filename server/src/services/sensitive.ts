import type { AppContext } from '../context';
import { msg } from '../i18n';
import { BadRequestError } from '../lib/errors';

/**
 * Sensitive-word check on prompts (`CheckSensitiveEnabled` + `CheckSensitiveOnPromptEnabled`,
 * words one per line in `SensitiveWords`, matched case-insensitively). A hit refuses the request
 * before anything is charged.
 */
function wordsOf(app: AppContext): string[] {
  const state = app.memo('sensitiveWords', () => {
    const s = { raw: '\u0000', words: [] as string[] };
    return s;
  });
  const raw = app.options.get('SensitiveWords');
  if (raw !== state.raw) {
    state.raw = raw;
    state.words = Array.from(
      new Set(
        raw
          .split(/\r?\n|,/)
          .map((w) => w.trim().toLowerCase())
          .filter(Boolean),
      ),
    );
  }
  return state.words;
}

/** The first listed word found in `text`, if any. */
export function findSensitiveWord(app: AppContext, text: string): string | undefined {
  const words = wordsOf(app);
  if (!words.length || !text) return undefined;
  const hay = text.toLowerCase();
  return words.find((w) => hay.includes(w));
}

/** Throws when prompt checking is on and `texts` contain a listed word. */
export function checkPromptSensitive(app: AppContext, texts: Iterable<string>): void {
  const o = app.options;
  if (!o.bool('CheckSensitiveEnabled') || !o.bool('CheckSensitiveOnPromptEnabled')) return;
  for (const t of texts) {
    const hit = findSensitiveWord(app, t);
    if (hit) throw new BadRequestError(msg('sensitive.hit', { word: hit }), 'sensitive_words_detected');
  }
}
