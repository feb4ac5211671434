/** How a usage-log row reads: type labels and colours, first-token time, retried channels, details. */
import { parseJsonObject } from '../shared/format';

export const LOG_TYPES = [0, 1, 2, 3, 4, 5] as const;
export function logTypeKey(type: number): string {
  return ['all', 'topup', 'consume', 'manage', 'system', 'error'][type] ?? 'unknown';
}
export function logTypeColor(type: number) {
  return (['grey', 'cyan', 'green', 'orange', 'purple', 'red'] as const)[type] ?? 'grey';
}

/** First-token time (other.frt, milliseconds) in seconds, or null when absent. */
export function firstTokenSeconds(other: unknown): number | null {
  const o = parseJsonObject(other);
  const frt = Number(o.frt);
  if (!Number.isFinite(frt) || frt <= 0) return null;
  return frt / 1000;
}

/** Channels tried for the request (admin retry column): other.admin_info.use_channel. */
export function usedChannels(other: unknown): string[] {
  const o = parseJsonObject(other);
  const info = o.admin_info;
  const list = info !== null && info !== undefined ? (info as { use_channel?: unknown }).use_channel : undefined;
  return Array.isArray(list) ? list.map((c: unknown) => String(c)) : [];
}

export interface LogDetail {
  /** i18n key + params parts to show */
  parts: { key: string; params?: Record<string, string | number> }[];
  text?: string;
}

/** Wire protocols as the usage log names them (`other.request_format` / `upstream_format`). */
const PROTOCOL_NAMES: Record<string, string> = { openai: 'OpenAI Chat', responses: 'OpenAI Responses', claude: 'Claude Messages', gemini: 'Gemini' };

const fmt = (n: unknown, d = 4) => {
  const v = Number(n);
  if (!Number.isFinite(v)) return '-';
  return String(Math.round(v * 10 ** d) / 10 ** d);
};

/**
 * Details column: consumption rows show the ratios from `other` (model price or model ratio,
 * completion ratio, cache ratio, group ratio); other rows show the content.
 */
export function logDetail(log: { type: number; content?: string; other?: unknown }): LogDetail {
  const o = parseJsonObject(log.other);
  if (Number(log.type) !== 2 || Object.keys(o).length === 0) return { parts: [], text: log.content ?? '' };
  const parts: LogDetail['parts'] = [];
  if (o.model_price !== undefined && Number(o.model_price) > 0) parts.push({ key: 'res.log.detail.model_price', params: { v: fmt(o.model_price) } });
  else if (o.model_ratio !== undefined) parts.push({ key: 'res.log.detail.model_ratio', params: { v: fmt(o.model_ratio) } });
  if (o.completion_ratio !== undefined && !(Number(o.model_price) > 0))
    parts.push({ key: 'res.log.detail.completion_ratio', params: { v: fmt(o.completion_ratio) } });
  if (o.cache_tokens !== undefined && Number(o.cache_tokens) > 0)
    parts.push({ key: 'res.log.detail.cache', params: { n: Number(o.cache_tokens), v: fmt(o.cache_ratio ?? 1) } });
  if (o.group_ratio !== undefined) parts.push({ key: 'res.log.detail.group_ratio', params: { v: fmt(o.group_ratio) } });
  if (o.is_model_mapped && o.upstream_model_name) parts.push({ key: 'res.log.detail.mapped', params: { m: String(o.upstream_model_name) } });
  if (typeof o.request_format === 'string' && typeof o.upstream_format === 'string') {
    const from = PROTOCOL_NAMES[o.request_format] ?? o.request_format;
    const to = PROTOCOL_NAMES[o.upstream_format] ?? o.upstream_format;
    parts.push(o.passthrough === false ? { key: 'res.log.detail.converted', params: { from, to } } : { key: 'res.log.detail.passthrough', params: { from } });
  }
  if (o.reasoning_effort) parts.push({ key: 'res.log.detail.reasoning', params: { v: String(o.reasoning_effort) } });
  return { parts, text: parts.length ? undefined : (log.content ?? '') };
}
