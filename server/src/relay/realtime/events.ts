/**
 * What the realtime relay follows of a session's events besides relaying them: whether the session
 * can speak and in which audio format (for the reservation's size and the audio's duration), what
 * each response in flight has delivered to the client (billed when no usage comes for it), and
 * upstream text made safe to show (errors, close reasons).
 */
import { isRecord } from '../../protocols/shared';
import { baseUrlOf } from '../../protocols/openai/adaptor';
import { scrubSecrets } from '../errors';
import { classifyIp, parseIp } from '../../lib/netAddress';
import type { ChannelEntry } from '../../channels/routeTable';

/** pcm16 at 24 kHz, mono: the default output format. */
const PCM16_BYTES_PER_SECOND = 48_000;
/** G.711 µ-law / A-law: 8 kHz, one byte a sample. */
const G711_BYTES_PER_SECOND = 8_000;

const TEXT_DELTAS = new Set([
  'response.text.delta',
  'response.output_text.delta',
  'response.audio_transcript.delta',
  'response.output_audio_transcript.delta',
  'response.function_call_arguments.delta',
]);
const AUDIO_DELTAS = new Set(['response.audio.delta', 'response.output_audio.delta']);

/**
 * The output modalities a session or response object names (`modalities` in the beta API,
 * `output_modalities` in GA; both together when both are given), if any.
 */
export function modalitiesOf(v: unknown): string[] | undefined {
  if (!isRecord(v)) return undefined;
  const beta = Array.isArray(v.modalities) ? (v.modalities as unknown[]) : undefined;
  const ga = Array.isArray(v.output_modalities) ? (v.output_modalities as unknown[]) : undefined;
  if (!beta && !ga) return undefined;
  return [...(beta ?? []), ...(ga ?? [])].filter((x): x is string => typeof x === 'string');
}

/**
 * Bytes per second of the output audio a session or response object names: `output_audio_format`
 * (beta: `pcm16`, `g711_ulaw`, `g711_alaw`) or `audio.output.format` (GA: `{type: 'audio/pcm',
 * rate}`, `audio/pcmu`, `audio/pcma`); undefined when it names none we know.
 */
export function audioRateOf(v: unknown): number | undefined {
  if (!isRecord(v)) return undefined;
  const audio = isRecord(v.audio) ? v.audio : undefined;
  const output = audio && isRecord(audio.output) ? audio.output : undefined;
  const f: unknown = v.output_audio_format ?? output?.format;
  const type = typeof f === 'string' ? f : isRecord(f) && typeof f.type === 'string' ? f.type : undefined;
  if (type === 'pcm16' || type === 'audio/pcm') {
    const rate = isRecord(f) && typeof f.rate === 'number' && Number.isFinite(f.rate) && f.rate > 0 ? f.rate : 24_000;
    return rate * 2;
  }
  if (type === 'g711_ulaw' || type === 'g711_alaw' || type === 'audio/pcmu' || type === 'audio/pcma') return G711_BYTES_PER_SECOND;
  return undefined;
}

/** Bytes a base64 string decodes to, without decoding it. */
export function base64Bytes(s: string): number {
  let pad = 0;
  if (s.endsWith('==')) pad = 2;
  else if (s.endsWith('=')) pad = 1;
  return Math.max(0, Math.floor((s.length * 3) / 4) - pad);
}

/** A response in flight and what the client got of it. */
export interface ResponseProgress {
  id: string;
  text: string[];
  audioBytes: number;
  /** Its output audio's rate (the response's own format, else the session's). */
  bytesPerSecond: number;
}

/** The session's state as its upstream events tell it. */
export class SessionTrack {
  /** The session's modalities include audio (OpenAI's default) until the upstream says otherwise. */
  audio = true;
  bytesPerSecond = PCM16_BYTES_PER_SECOND;
  /** Responses created and not done, by id. */
  readonly active = new Map<string, ResponseProgress>();

  /**
   * Follows one upstream event; `relayed`: the client was sent it (only relayed deltas count as
   * delivered). Returns the response a `response.done` finished, if it was followed.
   */
  follow(ev: Record<string, unknown>, relayed: boolean): ResponseProgress | undefined {
    const type = ev.type;
    if (typeof type !== 'string') return undefined;
    if (type === 'session.created' || type === 'session.updated') {
      const m = modalitiesOf(ev.session);
      if (m) this.audio = m.includes('audio');
      this.bytesPerSecond = audioRateOf(ev.session) ?? this.bytesPerSecond;
      return undefined;
    }
    if (type === 'response.created') {
      const r = ev.response;
      const id = isRecord(r) && typeof r.id === 'string' ? r.id : '';
      this.active.set(id, { id, text: [], audioBytes: 0, bytesPerSecond: audioRateOf(r) ?? this.bytesPerSecond });
      return undefined;
    }
    if (type === 'response.done') {
      const r = ev.response;
      const id = isRecord(r) && typeof r.id === 'string' ? r.id : '';
      const p = this.active.get(id);
      this.active.delete(id);
      return p;
    }
    const isText = TEXT_DELTAS.has(type);
    if (!relayed || (!isText && !AUDIO_DELTAS.has(type)) || typeof ev.delta !== 'string') return undefined;
    const id = typeof ev.response_id === 'string' ? ev.response_id : '';
    let p = this.active.get(id);
    if (!p) this.active.set(id, (p = { id, text: [], audioBytes: 0, bytesPerSecond: this.bytesPerSecond }));
    if (isText) p.text.push(ev.delta);
    else p.audioBytes += base64Bytes(ev.delta);
    return undefined;
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** IPv4 literals, and IPv6 ones in brackets, each with an optional port. */
const IP_LITERAL = /\b(\d{1,3}(?:\.\d{1,3}){3})(?::\d{1,5})?\b|\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?/g;

/**
 * Upstream text made safe to show a realtime client: the relay's `scrubSecrets` (key shapes and any
 * fragment of the channel's keys), then the channel's own host and any non-public address literal
 * (loopback, private, link-local …) become `***` — the channel's address is the operator's, not
 * the client's to learn.
 */
export function scrubUpstreamText(text: string, ch: ChannelEntry): string {
  let out = scrubSecrets(text, ch.keys);
  let host = '';
  try {
    host = new URL(baseUrlOf(ch.info)).hostname.replace(/^\[|\]$/g, '');
  } catch {
    /* no usable base URL */
  }
  // As a whole name, with its port: `llm` must not hit the word "llms".
  if (host) out = out.replace(new RegExp(`(?<![\\w.-])${escapeRe(host)}(?::\\d{1,5})?(?![\\w-]|\\.\\w)`, 'gi'), '***');
  return out.replace(IP_LITERAL, (whole, v4: string | undefined, v6: string | undefined) => {
    const b = parseIp(v4 ?? v6 ?? '');
    return b && classifyIp(b) ? '***' : whole;
  });
}

/** An upstream `error` event with every text of its `error` object scrubbed (`scrubUpstreamText`). */
export function scrubErrorEvent(ev: Record<string, unknown>, ch: ChannelEntry): string {
  const err = ev.error;
  if (!isRecord(err)) return JSON.stringify(ev);
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) clean[k] = typeof v === 'string' ? scrubUpstreamText(v, ch) : v;
  return JSON.stringify({ ...ev, error: clean });
}
