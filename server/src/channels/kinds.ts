/**
 * Channel kinds: their named ids (`CHANNEL_TYPE`) and the shape of a catalogue entry
 * (catalogue.ts holds the entries).
 */
import type { MessageKey } from '../i18n';

/** Named ids: use these instead of bare numbers (`CHANNEL_TYPE.Azure`, not `3`). */
export const CHANNEL_TYPE = {
  OpenAI: 1,
  Midjourney: 2,
  Azure: 3,
  Ollama: 4,
  MidjourneyPlus: 5,
  OpenAIMax: 6,
  OhMyGPT: 7,
  Custom: 8,
  AILS: 9,
  AIProxy: 10,
  PaLM: 11,
  API2GPT: 12,
  AIGC2D: 13,
  Anthropic: 14,
  Baidu: 15,
  Zhipu: 16,
  Ali: 17,
  Xunfei: 18,
  AI360: 19,
  OpenRouter: 20,
  AIProxyLibrary: 21,
  FastGPT: 22,
  Tencent: 23,
  Gemini: 24,
  Moonshot: 25,
  ZhipuV4: 26,
  Perplexity: 27,
  LingYiWanWu: 31,
  AwsClaude: 33,
  Cohere: 34,
  MiniMax: 35,
  Suno: 36,
  Dify: 37,
  Jina: 38,
  Cloudflare: 39,
  SiliconFlow: 40,
  VertexAI: 41,
  Mistral: 42,
  DeepSeek: 43,
  MokaAI: 44,
  VolcEngine: 45,
  BaiduV2: 46,
  Xinference: 47,
  xAI: 48,
  Coze: 49,
  Kling: 50,
  Jimeng: 51,
  Vidu: 52,
  Submodel: 53,
  DoubaoVideo: 54,
  Sora: 55,
  Replicate: 56,
} as const;

export type ChannelTypeName = keyof typeof CHANNEL_TYPE;

/**
 * An adaptor id: the module that serves a kind, `server/src/channels/providers/<id>.ts` (or
 * `<id>/index.ts`), and the `name` of the adaptor it exports. Not a closed list: the registry
 * (channels/providers/index.ts) loads every id an entry names, so adding a provider is its module plus
 * its entry; an id without a module stops the server at start and fails the catalogue test
 * (test/server/adaptorRegistry.test.ts), naming the entry.
 */
export type AdaptorId = string;

/** How a channel's balance is read (channels/balance.ts); absent = the provider publishes no balance endpoint. */
export type BalanceKind = 'openai-billing' | 'deepseek' | 'openrouter' | 'siliconflow' | 'moonshot' | 'aiproxy';

/** Tag colours the console's ColorTag knows. */
export type TypeColor = 'grey' | 'green' | 'orange' | 'blue' | 'purple' | 'cyan' | 'teal' | 'pink' | 'indigo' | 'violet' | 'light-blue';

/** Special fields the console's channel form shows for a kind (labels are console i18n keys). */
export interface FormFields {
  /** the OpenAI organization field */
  organization?: boolean;
  /** the base URL field relabelled; `required` when it must be filled; `fullUrl`: it is the whole
   *  request URL (so the console does not warn about a trailing /v1) */
  baseUrl?: { label: string; placeholder?: string; required?: boolean; fullUrl?: boolean };
  /** the `other` field (its default is the entry's `version`, when it has one) */
  other?: { label: string; placeholder?: string; multiline?: boolean };
  /** model names lose their dots (Azure deployment names) */
  stripModelDots?: boolean;
  /** i18n key of an information note shown under the type menu */
  hint?: string;
}

export interface ChannelTypeEntry {
  id: number;
  name: ChannelTypeName;
  /** the console's label (the product names kinds in English in both languages) */
  label: string;
  color: TypeColor;
  /** offered in the console's type menu; the others are accepted and routed for stored channels */
  offered: boolean;
  /** which adaptor serves it: the file name of its module in server/src/channels/providers (default: openai, the OpenAI-compatible one) */
  adaptor?: AdaptorId;
  /** default upstream when the channel has no base_url */
  baseUrl?: string;
  /** API path prefix of OpenAI-compatible calls when it is not `/v1` */
  apiPrefix?: string;
  /** suggested models (GET /api/models); absent = no suggestion list */
  models?: readonly string[];
  /** choosing the kind in the console fills its models (Midjourney, Suno) */
  predefinedModels?: boolean;
  balance?: BalanceKind;
  /** key format: `json` = a service-account JSON document (one object = one key, an array = several) */
  keyFormat?: 'json';
  /** placeholder of the key field */
  keyHint?: string;
  /**
   * Default version kept in `other`. `pinOnCreate`: a channel created without one stores it
   * (iFlytek); otherwise the relay only falls back to it at call time (Azure), so stored channels
   * follow a later change of the default.
   */
  version?: { value: string; pinOnCreate?: boolean };
  form?: FormFields;
  /**
   * The upstream has OpenAI's Responses API (`POST {prefix}/responses`) beside Chat Completions,
   * so a Responses client is passed through rather than converted. Only for kinds whose adaptor
   * speaks OpenAI's protocols; a channel's `setting.upstream_protocol` overrides it.
   */
  responsesApi?: boolean;
  /** Served only by the asynchronous task routes (server/src/tasks/): never picked for a model-API call. */
  taskOnly?: boolean;
  /**
   * The provider shut the kind down: new channels of it are refused with this message, stored ones
   * are reported (test and relay answer it) instead of being relayed.
   */
  /** A server message key (server/src/i18n): rendered in the reader's language where answered. */
  retired?: MessageKey;
}

/**
 * Values of a channel's `setting.upstream_protocol` (OpenAI-protocol kinds): which of OpenAI's two
 * chat APIs the upstream has. `chat`: Chat Completions only (Responses clients are converted);
 * `responses`: Responses only (every other client is converted to it); `both`. Absent: the kind's
 * `responsesApi` fact decides between `both` and `chat`.
 */
export const UPSTREAM_PROTOCOLS = ['chat', 'responses', 'both'] as const;
export type UpstreamProtocol = (typeof UPSTREAM_PROTOCOLS)[number];
