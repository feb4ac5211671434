import type { ChannelInfo, Endpoint, ProviderAdaptor, WireFormat } from '../types';
import { CHANNEL_TYPES, adaptorIdOf, hasResponsesApi, type AdaptorId } from '../../channels/catalogue';
import { openaiAdaptor } from './openai';
import { azureAdaptor } from './azure';
import { claudeAdaptor } from './claude';
import { awsClaudeAdaptor } from './bedrock';
import { geminiAdaptor } from './gemini';
import { vertexAdaptor } from './vertex';
import { cohereAdaptor } from './cohere';
import { cloudflareAdaptor } from './cloudflare';
import { ollamaAdaptor } from './ollama';
import { xinferenceAdaptor } from './xinference';
import { azureResponsesAdaptor, responsesAdaptor } from './responses';
import { baiduAdaptor } from './baidu';
import { difyAdaptor } from './dify';
import { tencentAdaptor } from './tencent';
import { xunfeiAdaptor } from './xunfei';
import { aiproxyLibraryAdaptor } from './aiproxyLibrary';
import { retiredAdaptor } from './retired';

/**
 * The built-in adaptors by id. Which channel type each serves is the catalogue's `adaptor` fact
 * (server/src/channels/catalogue.ts); an adaptor's `channelTypes` is derived from it.
 */
export const ADAPTORS: Readonly<Record<AdaptorId, ProviderAdaptor>> = {
  openai: openaiAdaptor,
  azure: azureAdaptor,
  claude: claudeAdaptor,
  'aws-claude': awsClaudeAdaptor,
  gemini: geminiAdaptor,
  vertex: vertexAdaptor,
  cohere: cohereAdaptor,
  cloudflare: cloudflareAdaptor,
  ollama: ollamaAdaptor,
  xinference: xinferenceAdaptor,
  baidu: baiduAdaptor,
  dify: difyAdaptor,
  tencent: tencentAdaptor,
  xunfei: xunfeiAdaptor,
  'aiproxy-library': aiproxyLibraryAdaptor,
  retired: retiredAdaptor,
};

// Built once: adaptorFor is on the relay's per-call path.
const byType = new Map<number, ProviderAdaptor>();
for (const e of CHANNEL_TYPES) byType.set(e.id, ADAPTORS[adaptorIdOf(e)]);
/** Kinds served only by the task routes (Midjourney, Suno): no model-API call goes to them. */
const TASK_ONLY = new Set(CHANNEL_TYPES.filter((e) => e.taskOnly).map((e) => e.id));

/** Registers an adaptor at run time (tests, plug-ins) for its `channelTypes`; later registrations win. */
export function registerAdaptor(a: ProviderAdaptor): void {
  for (const t of a.channelTypes) byType.set(t, a);
}

/** The adaptor of a channel type; a type the catalogue does not know is treated as OpenAI-compatible. */
export function adaptorFor(type: number): ProviderAdaptor {
  return byType.get(type) ?? openaiAdaptor;
}

/**
 * The Responses side of adaptors whose upstream may also (or only) have OpenAI's Responses API,
 * by URL shape: OpenAI-compatible `{base}{prefix}/responses`, or Azure's v1 surface.
 */
const RESPONSES_SIDE = new Map<ProviderAdaptor, ProviderAdaptor>([
  [openaiAdaptor, responsesAdaptor],
  [ollamaAdaptor, responsesAdaptor],
  [xinferenceAdaptor, responsesAdaptor],
  [azureAdaptor, azureResponsesAdaptor],
]);

const protocols = (...f: WireFormat[]): ReadonlySet<WireFormat> => new Set(f);
const SPEAKS_NOTHING = protocols();
const SPEAKS_CHAT = protocols('openai');
const SPEAKS_RESPONSES = protocols('responses');
const SPEAKS_BOTH = protocols('openai', 'responses');
const SPEAKS_OWN = new Map<WireFormat, ReadonlySet<WireFormat>>();
/** The one protocol of an adaptor with its own (Claude, Gemini, or one registered at run time). */
function speaksOwn(f: WireFormat): ReadonlySet<WireFormat> {
  let s = SPEAKS_OWN.get(f);
  if (!s) SPEAKS_OWN.set(f, (s = protocols(f)));
  return s;
}

type ChannelFacts = Pick<ChannelInfo, 'type' | 'setting'>;

/**
 * The wire protocols a channel speaks natively: a client speaking one of them is passed through
 * (its body forwarded, only the model mapped); any other client is converted through the
 * canonical format. A kind with its own protocol speaks it (Claude, Gemini) when its adaptor can
 * forward a body; OpenAI-protocol kinds speak Chat Completions, and Responses too when the
 * catalogue says their upstream has it (`responsesApi`), unless `setting.upstream_protocol`
 * says otherwise (`chat`, `responses`, `both`).
 */
export function channelSpeaks(ch: ChannelFacts): ReadonlySet<WireFormat> {
  const base = adaptorFor(ch.type);
  if (!base.rawRequest) return SPEAKS_NOTHING;
  if (base.format !== 'openai') return speaksOwn(base.format);
  if (!RESPONSES_SIDE.has(base)) return SPEAKS_CHAT;
  const p = ch.setting.upstream_protocol;
  if (p === 'responses') return SPEAKS_RESPONSES;
  if (p === 'both' || (p !== 'chat' && hasResponsesApi(ch.type))) return SPEAKS_BOTH;
  return SPEAKS_CHAT;
}

/** How a channel takes one call. */
export interface ChannelWay {
  readonly adaptor: ProviderAdaptor;
  /**
   * `passthrough`: the channel speaks the client's protocol, the body goes as sent;
   * `converted`: through the canonical chat format and the adaptor's chatRequest;
   * `endpoint`: a non-chat OpenAI endpoint the adaptor converts itself (Cohere rerank …);
   * `via-openai`: a client format's own non-chat endpoint put in OpenAI's shape (formats'
   *   `convertEndpoint`: Gemini embedContent → embeddings), then sent as that OpenAI endpoint.
   */
  readonly mode: 'passthrough' | 'converted' | 'endpoint' | 'via-openai';
}

/** Non-chat endpoints a client format converts to OpenAI's (its `convertEndpoint`) when the channel does not speak it. */
const VIA_OPENAI: Partial<Record<WireFormat, readonly Endpoint[]>> = { gemini: ['embeddings'] };

const ways = new WeakMap<ProviderAdaptor, Record<ChannelWay['mode'], ChannelWay>>();
function way(adaptor: ProviderAdaptor, mode: ChannelWay['mode']): ChannelWay {
  let w = ways.get(adaptor);
  if (!w) {
    w = {
      passthrough: { adaptor, mode: 'passthrough' },
      converted: { adaptor, mode: 'converted' },
      endpoint: { adaptor, mode: 'endpoint' },
      'via-openai': { adaptor, mode: 'via-openai' },
    };
    ways.set(adaptor, w);
  }
  return w[mode];
}

/**
 * How a channel serves `endpoint` for a client speaking `format`, or undefined when it cannot.
 * Chat-like calls (`chat` from Chat, Claude and Gemini clients; `responses` from Responses clients)
 * are served by every channel: passed through when it speaks the client's protocol, else converted
 * with the adaptor of the protocol its upstream answers in. Other endpoints are OpenAI's and
 * passthrough only, apart from those an adaptor converts itself.
 */
export function channelWay(ch: ChannelFacts, endpoint: Endpoint, format: WireFormat): ChannelWay | undefined {
  if (TASK_ONLY.has(ch.type)) return undefined;
  const base = adaptorFor(ch.type);
  if (endpoint === 'chat' || (endpoint === 'responses' && format === 'responses')) {
    const speaks = channelSpeaks(ch);
    if (speaks.has(format)) return way(format === 'responses' ? (RESPONSES_SIDE.get(base) ?? base) : base, 'passthrough');
    // An upstream with Responses only answers converted calls in Responses too.
    return way(speaks === SPEAKS_RESPONSES ? RESPONSES_SIDE.get(base)! : base, 'converted');
  }
  if (format === 'openai' && base.convertedEndpoints?.includes(endpoint)) return way(base, 'endpoint');
  if (base.format === format && base.rawRequest && (base.endpoints ?? []).includes(endpoint)) return way(base, 'passthrough');
  if (VIA_OPENAI[format]?.includes(endpoint) && channelWay(ch, endpoint, 'openai')) return way(base, 'via-openai');
  return undefined;
}

/** The adaptor that answers a channel's chat calls (the Responses one when its upstream has only that); none for task-only kinds. */
export function chatAdaptorOf(ch: ChannelFacts): ProviderAdaptor | undefined {
  return channelWay(ch, 'chat', 'openai')?.adaptor;
}
