import type { RelayHttp } from './httpContext';

export type KeyStyle = 'openai' | 'claude' | 'gemini';

/**
 * Extracts the API key a client sent, without the `sk-` prefix. OpenAI style: `Authorization:
 * Bearer sk-<key>` (the prefix is optional), or `api-key` as Azure clients send it. Claude style also accepts `x-api-key`; Gemini style
 * `x-goog-api-key` or `?key=`. Returns '' when none was sent.
 */
export function extractKey(ctx: Pick<RelayHttp, 'get' | 'query'>, style: KeyStyle): string {
  let raw = '';
  if (style === 'claude') raw = ctx.get('x-api-key');
  else if (style === 'gemini') raw = ctx.get('x-goog-api-key') || (typeof ctx.query.key === 'string' ? ctx.query.key : '');
  if (!raw) {
    const authz = ctx.get('authorization');
    if (authz) raw = /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '') : authz;
  }
  // Azure-style clients send `api-key`.
  if (!raw && style === 'openai') raw = ctx.get('api-key');
  return normaliseKey(raw);
}

export function normaliseKey(raw: string): string {
  let k = raw.trim();
  if (k.startsWith('sk-')) k = k.slice(3);
  return k;
}
