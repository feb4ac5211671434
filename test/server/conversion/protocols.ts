/**
 * The protocol table of the golden conversion suite: for each wire protocol, the client-facing
 * format (inbound), the upstream adaptor and the channel kind that selects it. Built from what the
 * relay exports, so a protocol whose modules do not exist yet (the Responses API while it is being
 * written) simply has no entry; once `inboundFormats.responses` and an adaptor with
 * `format: 'responses'` exist, its fixtures run without a change here.
 */
import { DEFAULT_OPTIONS } from '../../../seeds/defaultOptions';
import { ADAPTORS, adaptorFor } from '../../../server/src/channels/providers';
import { inboundFormats, inboundRoutes } from '../../../server/src/protocols';
import type { AdaptorContext, InboundFormat, ProviderAdaptor, WireFormat } from '../../../server/src/relay/types';

export interface Protocol {
  name: WireFormat;
  /** Client side: absent when the relay has no client format for it yet. */
  inbound?: InboundFormat;
  /** Upstream side: absent when no adaptor speaks it yet. */
  adaptor?: ProviderAdaptor;
  channelType: number;
  channelSetting: Record<string, unknown>;
  /** The model a client of this protocol asks for (answers name it back). */
  clientModel: string;
  /** The model a channel of this protocol is mapped to (model_mapping), so the two never coincide. */
  upstreamModel: string;
}

/** The channel key of every golden channel: upstream error texts quoting it must come back scrubbed. */
export const CHANNEL_KEY = 'sk-gw7Hq2Zx9Lm4Tc8Rv';

interface Facts {
  /** Channel type of the kind (for Responses: an OpenAI channel set to speak only the Responses API). */
  channelType: number;
  channelSetting?: Record<string, unknown>;
  clientModel: string;
  upstreamModel: string;
}

const FACTS: Record<WireFormat, Facts> = {
  openai: { channelType: 1, clientModel: 'gpt-4o', upstreamModel: 'gpt-4.1' },
  responses: { channelType: 1, channelSetting: { upstream_protocol: 'responses' }, clientModel: 'gpt-5-codex', upstreamModel: 'gpt-5' },
  claude: { channelType: 14, clientModel: 'claude-sonnet-4-5', upstreamModel: 'claude-sonnet-4-5-20250929' },
  gemini: { channelType: 24, clientModel: 'gemini-2.5-flash', upstreamModel: 'gemini-2.5-pro' },
};

export const PROTOCOL_NAMES: readonly WireFormat[] = ['openai', 'responses', 'claude', 'gemini'];

/**
 * A relay module that may not exist yet (the Responses format and adaptor while they are being
 * written): its exports, or an empty object. A static import would fail the whole suite.
 */
function optionalModule(path: string): Record<string, unknown> {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional at run time by design
    return require(path) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const SRC = '../../../server/src';
const adaptorsIndex = optionalModule(`${SRC}/channels/providers`);

const isInbound = (v: unknown, name: WireFormat): v is InboundFormat => !!v && typeof v === 'object' && (v as InboundFormat).name === name;
const isAdaptor = (v: unknown, name: WireFormat): v is ProviderAdaptor =>
  !!v && typeof v === 'object' && (v as ProviderAdaptor).format === name && typeof (v as ProviderAdaptor).chatRequest === 'function';

function inboundOf(name: WireFormat): InboundFormat | undefined {
  const registered = (inboundFormats as Record<string, unknown>)[name];
  if (isInbound(registered, name)) return registered;
  return Object.values(optionalModule(`${SRC}/protocols/${name}/format`)).find((v): v is InboundFormat => isInbound(v, name));
}

/**
 * The adaptor answering chat calls on a channel of this kind: the relay's own choice when it
 * exports one (`chatAdaptorOf`, which reads the channel's protocol setting), else the adaptor of
 * the channel type, else any adaptor module speaking the protocol.
 */
function adaptorOf(name: WireFormat, facts: Facts): ProviderAdaptor | undefined {
  const choose = adaptorsIndex.chatAdaptorOf as ((ch: { type: number; setting: Record<string, unknown> }) => ProviderAdaptor) | undefined;
  const chosen = choose?.({ type: facts.channelType, setting: facts.channelSetting ?? {} });
  if (isAdaptor(chosen, name)) return chosen;
  const byType = adaptorFor(facts.channelType);
  if (isAdaptor(byType, name)) return byType;
  const all = [...Object.values(ADAPTORS), ...Object.values(optionalModule(`${SRC}/protocols/${name}/adaptor`))];
  return all.find((a): a is ProviderAdaptor => isAdaptor(a, name));
}

function buildTable(): Partial<Record<WireFormat, Protocol>> {
  const table: Partial<Record<WireFormat, Protocol>> = {};
  for (const name of PROTOCOL_NAMES) {
    const facts = FACTS[name];
    const inbound = inboundOf(name);
    const adaptor = adaptorOf(name, facts);
    if (!inbound && !adaptor) continue;
    table[name] = {
      name,
      inbound,
      adaptor,
      channelType: facts.channelType,
      channelSetting: facts.channelSetting ?? {},
      clientModel: facts.clientModel,
      upstreamModel: facts.upstreamModel,
    };
  }
  return table;
}

export const PROTOCOLS = buildTable();

/** Protocols a client can speak to the gateway. */
export const clientProtocols = (): Protocol[] => PROTOCOL_NAMES.map((n) => PROTOCOLS[n]).filter((p): p is Protocol => !!p?.inbound);
/** Protocols an upstream channel can speak. */
export const upstreamProtocols = (): Protocol[] => PROTOCOL_NAMES.map((n) => PROTOCOLS[n]).filter((p): p is Protocol => !!p?.adaptor);

/** Every converted direction (client ≠ upstream; same protocol is a passthrough). */
export function directions(): Array<{ client: Protocol; upstream: Protocol; key: string }> {
  const out: Array<{ client: Protocol; upstream: Protocol; key: string }> = [];
  for (const client of clientProtocols()) {
    for (const upstream of upstreamProtocols()) {
      if (client.name !== upstream.name) out.push({ client, upstream, key: `${client.name}__${upstream.name}` });
    }
  }
  return out;
}

/** The adaptor context of a golden channel of this protocol (default options, no base URL). */
export function adaptorContext(p: Protocol, opts: { stream: boolean; requestedModel: string }): AdaptorContext {
  return {
    channel: { id: 1, type: p.channelType, name: `golden-${p.name}`, key: CHANNEL_KEY, baseUrl: '', organization: '', other: '', setting: p.channelSetting },
    upstreamModel: p.upstreamModel,
    requestedModel: opts.requestedModel,
    stream: opts.stream,
    endpoint: 'chat',
    option: (k: string) => DEFAULT_OPTIONS[k] ?? '',
  };
}

/** What the route of a client path says (Gemini: model and streaming from the path). */
export function routeOf(p: Protocol, path: string): { modelFromPath?: string; stream?: boolean } {
  const pathname = path.split('?')[0]!;
  for (const r of inboundRoutes) {
    if (r.format !== p.inbound) continue;
    const m = r.match(pathname);
    if (m) return m;
  }
  return {};
}
