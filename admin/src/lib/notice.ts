import { store } from './storage';

/** Where the dismissed notice's hash is kept: the notice shows again once its text changes. */
export const NOTICE_HASH_KEY = 'notice_dismissed_hash';

/** A short, stable hash of the notice text (FNV-1a, 32 bits, hex): enough to tell one text from the next. */
export function noticeHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** Should this notice be shown: it has text, and that text is not the one last dismissed. */
export function shouldShowNotice(text: string, dismissed: string | null = store().getItem(NOTICE_HASH_KEY)): boolean {
  const t = text.trim();
  return t !== '' && dismissed !== noticeHash(t);
}

/** Remembers that this notice text was dismissed. */
export function dismissNotice(text: string): void {
  store().setItem(NOTICE_HASH_KEY, noticeHash(text.trim()));
}
