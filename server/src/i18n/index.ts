import { en } from './en';
import { zh, type MessageKey } from './zh';

export type { MessageKey } from './zh';

/** The languages the server answers in. */
export type Lang = 'zh' | 'en';
export const LANGS: readonly Lang[] = ['zh', 'en'];

/** A parameter of a message: text, a number, or another message (rendered in the same language). */
export type MessageParam = string | number | Message;
export type MessageParams = Record<string, MessageParam>;

/** A message not yet rendered: its catalogue key and the values of its `{name}` placeholders. */
export interface Message {
  readonly key: MessageKey;
  readonly params?: MessageParams;
}

const CATALOGUES: Record<Lang, Record<MessageKey, string>> = { zh, en };

export function msg(key: MessageKey, params?: MessageParams): Message {
  return params ? { key, params } : { key };
}

/** Text that is not ours (an upstream's error, a value the operator typed): shown as is in every language. */
export function verbatim(text: string): Message {
  return { key: 'common.verbatim', params: { text } };
}

export function isMessageKey(s: unknown): s is MessageKey {
  return typeof s === 'string' && Object.prototype.hasOwnProperty.call(zh, s);
}

export function toMessage(m: MessageKey | Message): Message {
  return typeof m === 'string' ? { key: m } : m;
}

/** Renders a message in `lang`: `{name}` takes the param's value; an unknown placeholder stays as written. */
export function t(lang: Lang, m: MessageKey | Message, params?: MessageParams): string {
  const { key, params: own } = toMessage(m);
  const values = params ?? own;
  const template = CATALOGUES[lang][key] ?? zh[key] ?? key;
  if (!values) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = values[name];
    if (v === undefined) return whole;
    return typeof v === 'object' ? t(lang, v) : String(v);
  });
}

/**
 * The answer's language from an `Accept-Language` header: the best-weighted of zh / en (`zh-CN`
 * → zh, `en-US` → en, `q=0` refused). No header, or nothing we speak: English — API clients and
 * SDKs rarely send one, and English is what their users expect; the console always sends its own.
 */
export function pickLanguage(header: string | string[] | undefined | null): Lang {
  return statedLanguage(header) ?? 'en';
}

/** The language the header asks for, if it names zh or en at all; undefined otherwise. */
export function statedLanguage(header: string | string[] | undefined | null): Lang | undefined {
  if (Array.isArray(header)) header = header.join(',');
  if (!header) return undefined;
  let best: Lang | undefined;
  let bestQ = 0;
  for (const part of header.split(',')) {
    const [tag, ...attrs] = part.trim().split(';');
    const primary = tag.trim().toLowerCase().split('-')[0];
    let q = 1;
    for (const a of attrs) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(a);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q) || q <= 0) continue;
    const lang: Lang | undefined = primary === 'zh' ? 'zh' : primary === 'en' ? 'en' : undefined;
    if (lang && q > bestQ) {
      best = lang;
      bestQ = q;
    }
  }
  return best;
}

/**
 * The server's own language (SERVER_LANGUAGE, default zh): what it writes with no reader at hand —
 * operator notifications, usage-log text, mails to users whose language is unknown.
 */
export function serverLang(app: { config: { serverLanguage?: Lang } }): Lang {
  return app.config.serverLanguage ?? 'zh';
}

/** The language of one request (cached on it): anything with request headers, Koa or the bare relay context. */
export function requestLang(ctx: { get(field: string): string; state?: Record<string, unknown> }): Lang {
  const cached = ctx.state?.lang;
  if (cached === 'zh' || cached === 'en') return cached;
  const lang = pickLanguage(ctx.get('accept-language'));
  if (ctx.state) ctx.state.lang = lang;
  return lang;
}

/** Something that carries a message (AppError, UpstreamError): its text in `lang`, else its plain message. */
export function localize(err: unknown, lang: Lang): string {
  const m = (err as { msg?: Message } | null)?.msg;
  if (m && isMessageKey(m.key)) return t(lang, m);
  return err instanceof Error ? err.message : String(err);
}

/**
 * A zod rule's message: the key, or the key and its params packed into the one string zod keeps
 * (unpacked by `fromZodText` when the answer is shaped).
 */
export function zmsg(key: MessageKey, params?: MessageParams): string {
  return params ? `${ZOD_PREFIX}${JSON.stringify({ key, params })}` : key;
}
const ZOD_PREFIX = 'i18n:';

/** A zod issue's message back as a Message (see `zmsg`); undefined for text zod wrote itself. */
export function fromZodText(text: string): Message | undefined {
  if (isMessageKey(text)) return { key: text };
  if (!text.startsWith(ZOD_PREFIX)) return undefined;
  try {
    const m = JSON.parse(text.slice(ZOD_PREFIX.length)) as Message;
    return isMessageKey(m.key) ? m : undefined;
  } catch {
    return undefined;
  }
}
