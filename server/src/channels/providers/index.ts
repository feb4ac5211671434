import type { ChannelInfo, Endpoint, ProviderAdaptor, WireFormat } from '../../relay/types';
import { CHANNEL_TYPES, adaptorIdOf, hasResponsesApi } from '../catalogue';
import { type AdaptorId } from '../kinds';
import { openaiAdaptor } from '../../protocols/openai/adaptor';
import { responsesAdaptor } from '../../protocols/responses/adaptor';
import { azureResponsesAdaptor } from './azure';
import { claudeAdaptor } from '../../protocols/claude/adaptor';
import { geminiAdaptor } from '../../protocols/gemini/adaptor';

/**
 * The adaptors of the four wire protocols themselves (server/src/protocols/<id>/adaptor.ts), by id.
 * The protocols are a fixed set; every other id the catalogue names is a provider module here.
 */
const PROTOCOL_ADAPTORS: Readonly<Record<string, ProviderAdaptor>> = Object.freeze({
  openai: openaiAdaptor,
  responses: responsesAdaptor,
  claude: claudeAdaptor,
  gemini: geminiAdaptor,
});

/**
 * Loads the adaptor the catalogue names `id`: a protocol's own (PROTOCOL_ADAPTORS), else module `./<id>.ts` (or `./<id>/index.ts` for a
 * provider kept in a folder), whose export named `id` (its `name`) is the adaptor. No list of
 * adaptors is kept anywhere else: a provider is its module plus its catalogue entry.
 *
 * The `require` with a template literal is what lets the esbuild bundle (server/build.mjs) find the
 * modules: esbuild turns it into a table of every `.ts` file under this folder, keyed by path, and
 * tsx and jest resolve it on disk. Runs once per id at load, never per call. Throws, naming the
 * catalogue entries, when the module or its adaptor is missing.
 */
export function loadAdaptor(id: AdaptorId): ProviderAdaptor {
  if (Object.hasOwn(PROTOCOL_ADAPTORS, id)) return PROTOCOL_ADAPTORS[id]!;
  const namedBy =
    CHANNEL_TYPES.filter((e) => adaptorIdOf(e) === id)
      .map((e) => `${e.name} (${e.id})`)
      .join(', ') || 'no catalogue entry';
  if (!/^[A-Za-z0-9][\w-]*$/.test(id)) throw new Error(`adaptor id '${id}' (named by ${namedBy}) is not a module name in server/src/channels/providers/`);
  const found = requireModule(id);
  if (!found)
    throw new Error(`the channel catalogue names adaptor '${id}' (for ${namedBy}) but server/src/channels/providers/ has neither ${id}.ts nor ${id}/index.ts`);
  const adaptors = Object.values(found.exports).filter((v): v is ProviderAdaptor => isAdaptorNamed(v, id));
  if (adaptors.length !== 1) {
    throw new Error(
      `server/src/channels/providers/${found.file} (adaptor '${id}' of ${namedBy}) must export exactly one ProviderAdaptor whose name is '${id}'; it exports ${adaptors.length}`,
    );
  }
  return adaptors[0];
}

function requireModule(id: string): { file: string; exports: Record<string, unknown> } | undefined {
  for (const stem of [id, `${id}/index`]) {
    try {
      // One pattern for both shapes: esbuild's `*` also matches across folders (./**/*.ts).
      return { file: `${stem}.ts`, exports: require(`./${stem}.ts`) as Record<string, unknown> }; // eslint-disable-line @typescript-eslint/no-require-imports -- a template-literal require is what esbuild bundles as this folder's module table (see loadAdaptor)
    } catch (err) {
      if (!isNotFound(err, `./${stem}.ts`)) throw err;
    }
  }
  return undefined;
}

/**
 * Is `err` the loader saying the module `request` itself does not exist (not one it imports)?
 * Node/tsx and jest, then the esbuild bundle. Jest's errors come from another realm: no instanceof.
 */
function isNotFound(err: unknown, request: string): boolean {
  const message =
    typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string' ? (err as { message: string }).message : '';
  return message.startsWith(`Cannot find module '${request}'`) || message === `Module not found in bundle: ${request}`;
}

function isAdaptorNamed(v: unknown, id: string): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const a = v as Partial<ProviderAdaptor>;
  return a.name === id && Array.isArray(a.channelTypes) && typeof a.chatRequest === 'function';
}

/**
 * The built-in adaptors by id: one per id the catalogue names (its entries' `adaptor` fact,
 * server/src/channels/catalogue.ts, `openai` by default), loaded from this folder at start. An
 * adaptor's `channelTypes` is derived from the catalogue too (`typesServedBy`).
 */
export const ADAPTORS: Readonly<Record<AdaptorId, ProviderAdaptor>> = Object.freeze(
  Object.fromEntries([...new Set(CHANNEL_TYPES.map(adaptorIdOf))].map((id) => [id, loadAdaptor(id)])),
);

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

/** The Responses-API adaptor of each URL shape an OpenAI-protocol adaptor declares (`responsesSide`). */
const RESPONSES_BY_SHAPE = { openai: responsesAdaptor, azure: azureResponsesAdaptor } as const;
/** The Responses side of an adaptor whose upstream may also (or only) have OpenAI's Responses API. */
function responsesSideOf(a: ProviderAdaptor): ProviderAdaptor | undefined {
  return a.format === 'openai' && a.responsesSide && a.responsesSide !== 'none' ? RESPONSES_BY_SHAPE[a.responsesSide] : undefined;
}

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
  if (!responsesSideOf(base)) return SPEAKS_CHAT;
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
    if (speaks.has(format)) return way(format === 'responses' ? (responsesSideOf(base) ?? base) : base, 'passthrough');
    // An upstream with Responses only answers converted calls in Responses too.
    return way(speaks === SPEAKS_RESPONSES ? responsesSideOf(base)! : base, 'converted');
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
