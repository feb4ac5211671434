import { t, type Lang } from '../i18n';
import { CHANNEL_TYPE, type ChannelTypeName, type AdaptorId, type BalanceKind, type TypeColor, type ChannelTypeEntry } from './kinds';
import { CLAUDE, GEMINI, MIDJOURNEY, OPENAI } from './models';

/**
 * The channel-type catalogue: every provider kind the gateway knows, by its stored numeric id
 * (new-api numbering), with all the facts the server and the console need about it. Relay
 * (adaptor choice, default base URL, API prefix), suggested model lists, balance lookups,
 * validation of a channel's type and the console's type menu/form all read this one table.
 *
 * Adding an OpenAI-compatible kind = one entry here (see docs/architecture.md). The named ids and
 * the shape of an entry are in kinds.ts, the model lists several kinds share in models.ts. The
 * console's unit tests import this module to build their fixture.
 */

export { CHANNEL_TYPE } from './kinds';

/** Azure OpenAI API version used when a channel names none (the latest GA version). */
export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

const T = CHANNEL_TYPE;

/** The catalogue, in the console's menu order (offered kinds first). */
export const CHANNEL_TYPES: readonly ChannelTypeEntry[] = [
  {
    id: T.OpenAI,
    name: 'OpenAI',
    label: 'OpenAI',
    color: 'green',
    offered: true,
    baseUrl: 'https://api.openai.com',
    models: OPENAI,
    balance: 'openai-billing',
    form: { organization: true },
    responsesApi: true,
  },
  {
    id: T.Midjourney,
    name: 'Midjourney',
    label: 'Midjourney Proxy',
    color: 'light-blue',
    offered: true,
    baseUrl: 'https://oa.api2d.net',
    models: MIDJOURNEY,
    predefinedModels: true,
    // Served by the task routes (server/src/tasks/midjourney.ts); the key goes in mj-api-secret.
    keyHint: 'mj-api-secret',
    taskOnly: true,
    balance: 'openai-billing',
  },
  {
    id: T.MidjourneyPlus,
    name: 'MidjourneyPlus',
    label: 'Midjourney Proxy Plus',
    color: 'blue',
    offered: true,
    baseUrl: 'https://api.openai-sb.com',
    models: MIDJOURNEY,
    predefinedModels: true,
    // Served by the task routes (server/src/tasks/midjourney.ts); the key goes in mj-api-secret.
    keyHint: 'mj-api-secret',
    taskOnly: true,
    balance: 'openai-billing',
  },
  {
    id: T.Suno,
    name: 'Suno',
    label: 'Suno',
    color: 'green',
    offered: true,
    models: ['suno_music', 'suno_lyrics'],
    predefinedModels: true,
    // Served by the task routes (server/src/tasks/suno.ts): /suno/submit/*, /suno/fetch.
    taskOnly: true,
    form: { baseUrl: { label: 'res.channel.fields.suno_path', placeholder: 'https://suno.example.com' } },
  },
  {
    id: T.Ollama,
    name: 'Ollama',
    label: 'Ollama',
    color: 'grey',
    offered: true,
    adaptor: 'ollama',
    baseUrl: 'http://localhost:11434',
    models: ['llama3.1', 'llama3.2', 'qwen2.5', 'mistral', 'gemma2', 'deepseek-r1'],
  },
  {
    id: T.Anthropic,
    name: 'Anthropic',
    label: 'Claude',
    color: 'indigo',
    offered: true,
    adaptor: 'claude',
    baseUrl: 'https://api.anthropic.com',
    models: CLAUDE,
  },
  {
    id: T.AwsClaude,
    name: 'AwsClaude',
    label: 'AWS Claude',
    color: 'indigo',
    offered: true,
    adaptor: 'bedrock',
    keyHint: 'AccessKey|SecretAccessKey|Region',
    models: [
      'claude-3-haiku-20240307',
      'claude-3-5-haiku-20241022',
      'claude-3-5-sonnet-20241022',
      'claude-3-7-sonnet-20250219',
      'claude-sonnet-4-20250514',
      'claude-opus-4-20250514',
    ],
  },
  {
    id: T.VertexAI,
    name: 'VertexAI',
    label: 'Vertex AI',
    color: 'blue',
    offered: true,
    adaptor: 'vertex',
    keyFormat: 'json',
    keyHint: '{ "type": "service_account", ... }',
    models: [...CLAUDE.filter((m) => !m.startsWith('claude-3-haiku')), ...GEMINI],
    form: {
      other: {
        label: 'res.channel.fields.region',
        placeholder: 'us-central1  /  {"default": "us-central1", "claude-3-5-sonnet-20240620": "europe-west1"}',
        multiline: true,
      },
    },
  },
  {
    id: T.Azure,
    name: 'Azure',
    label: 'Azure OpenAI',
    color: 'teal',
    offered: true,
    adaptor: 'azure',
    models: OPENAI.filter((m) => !m.startsWith('o1-mini')),
    version: { value: AZURE_DEFAULT_API_VERSION },
    form: {
      baseUrl: { label: 'res.channel.fields.azure_endpoint', placeholder: 'https://docs-test-001.openai.azure.com', required: true },
      other: { label: 'res.channel.fields.azure_api_version', placeholder: AZURE_DEFAULT_API_VERSION },
      stripModelDots: true,
      hint: 'res.channel.hint.azure',
    },
    responsesApi: true,
  },
  {
    id: T.Cohere,
    name: 'Cohere',
    label: 'Cohere',
    color: 'purple',
    offered: true,
    adaptor: 'cohere',
    baseUrl: 'https://api.cohere.ai',
    models: ['command-r', 'command-r-plus', 'command-r7b-12-2024', 'rerank-english-v3.0', 'rerank-multilingual-v3.0'],
  },
  {
    id: T.Cloudflare,
    name: 'Cloudflare',
    label: 'Cloudflare',
    color: 'grey',
    offered: true,
    adaptor: 'cloudflare',
    models: ['@cf/meta/llama-3.1-8b-instruct', '@cf/meta/llama-3-8b-instruct', '@cf/mistral/mistral-7b-instruct-v0.1', '@cf/qwen/qwen1.5-14b-chat-awq'],
    form: { other: { label: 'res.channel.fields.account_id', placeholder: 'd6b5da8hk1awo8nap34ube6gh' } },
  },
  {
    id: T.DeepSeek,
    name: 'DeepSeek',
    label: 'DeepSeek',
    color: 'blue',
    offered: true,
    baseUrl: 'https://api.deepseek.com',
    models: ['deepseek-chat', 'deepseek-reasoner'],
    balance: 'deepseek',
  },
  {
    id: T.Gemini,
    name: 'Gemini',
    label: 'Gemini',
    color: 'orange',
    offered: true,
    adaptor: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com',
    models: GEMINI,
  },
  {
    id: T.PaLM,
    name: 'PaLM',
    label: 'PaLM2',
    color: 'orange',
    offered: true,
    adaptor: 'retired',
    retired: 'channel.palm_retired',
    models: ['PaLM-2'],
  },
  {
    id: T.Baidu,
    name: 'Baidu',
    label: 'Baidu',
    color: 'blue',
    offered: true,
    adaptor: 'baidu',
    baseUrl: 'https://aip.baidubce.com',
    keyHint: 'APIKey|SecretKey',
    models: ['ERNIE-4.0-8K', 'ERNIE-3.5-8K', 'ERNIE-Speed-128K', 'ERNIE-Lite-8K', 'Embedding-V1'],
  },
  {
    id: T.BaiduV2,
    name: 'BaiduV2',
    label: 'Baidu V2',
    color: 'blue',
    offered: true,
    baseUrl: 'https://qianfan.baidubce.com',
    apiPrefix: '/v2',
    models: ['ernie-4.0-8k', 'ernie-3.5-8k', 'ernie-speed-128k', 'ernie-lite-8k'],
  },
  {
    id: T.Zhipu,
    name: 'Zhipu',
    label: 'Zhipu',
    color: 'violet',
    offered: true,
    baseUrl: 'https://open.bigmodel.cn',
    apiPrefix: '/api/paas/v4',
    models: ['glm-4', 'glm-4-plus', 'glm-4-air', 'glm-4-flash', 'glm-4v', 'embedding-2'],
  },
  {
    id: T.ZhipuV4,
    name: 'ZhipuV4',
    label: 'Zhipu GLM-4V',
    color: 'purple',
    offered: true,
    baseUrl: 'https://open.bigmodel.cn',
    apiPrefix: '/api/paas/v4',
    models: ['glm-4', 'glm-4v', 'glm-4-plus', 'glm-4-flash', 'glm-4-air'],
  },
  {
    id: T.Ali,
    name: 'Ali',
    label: 'Alibaba',
    color: 'orange',
    offered: true,
    baseUrl: 'https://dashscope.aliyuncs.com',
    apiPrefix: '/compatible-mode/v1',
    models: ['qwen-turbo', 'qwen-plus', 'qwen-max', 'qwen-long', 'text-embedding-v1'],
  },
  {
    id: T.Xunfei,
    name: 'Xunfei',
    label: 'iFlytek',
    color: 'blue',
    offered: true,
    adaptor: 'xunfei',
    baseUrl: 'wss://spark-api.xf-yun.com',
    keyHint: 'APPID|APISecret|APIKey',
    version: { value: 'v2.1', pinOnCreate: true },
    models: ['SparkDesk-v1.1', 'SparkDesk-v3.5', 'SparkDesk-v4.0', '4.0Ultra'],
    form: { other: { label: 'res.channel.fields.spark_version', placeholder: 'v2.1' } },
  },
  {
    id: T.AI360,
    name: 'AI360',
    label: '360',
    color: 'grey',
    offered: true,
    baseUrl: 'https://api.360.cn',
    models: ['360GPT_S2_V9', 'embedding-bert-512-v1', 'embedding_s1_v1', 'semantic_similarity_s1_v1'],
  },
  {
    id: T.OpenRouter,
    name: 'OpenRouter',
    label: 'OpenRouter',
    color: 'grey',
    offered: true,
    baseUrl: 'https://openrouter.ai/api',
    balance: 'openrouter',
    models: ['openai/gpt-4o', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'google/gemini-2.5-pro', 'deepseek/deepseek-chat'],
  },
  {
    id: T.AIProxyLibrary,
    name: 'AIProxyLibrary',
    label: 'AI Proxy',
    color: 'purple',
    offered: true,
    adaptor: 'aiproxyLibrary',
    baseUrl: 'https://api.aiproxy.io',
    balance: 'aiproxy',
    models: ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet-20241022'],
    form: { other: { label: 'res.channel.fields.knowledge_id', placeholder: '123456' } },
  },
  {
    id: T.FastGPT,
    name: 'FastGPT',
    label: 'FastGPT',
    color: 'blue',
    offered: true,
    baseUrl: 'https://fastgpt.run/api/openapi',
    keyHint: 'APIKey-AppId',
    models: ['fastgpt'],
    form: { baseUrl: { label: 'res.channel.fields.private_address', placeholder: 'https://fastgpt.example.com/api/openapi', required: true } },
  },
  {
    id: T.Tencent,
    name: 'Tencent',
    label: 'Tencent',
    color: 'teal',
    offered: true,
    adaptor: 'tencent',
    baseUrl: 'https://hunyuan.tencentcloudapi.com',
    keyHint: 'AppId|SecretId|SecretKey',
    models: ['hunyuan-lite', 'hunyuan-standard', 'hunyuan-pro', 'hunyuan-turbo'],
  },
  {
    id: T.Moonshot,
    name: 'Moonshot',
    label: 'Moonshot',
    color: 'grey',
    offered: true,
    baseUrl: 'https://api.moonshot.cn',
    balance: 'moonshot',
    models: ['moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k'],
  },
  {
    id: T.LingYiWanWu,
    name: 'LingYiWanWu',
    label: 'Yi',
    color: 'green',
    offered: true,
    baseUrl: 'https://api.lingyiwanwu.com',
    models: ['yi-large', 'yi-medium', 'yi-spark', 'yi-lightning', 'yi-vision'],
  },
  {
    id: T.MiniMax,
    name: 'MiniMax',
    label: 'MiniMax',
    color: 'green',
    offered: true,
    baseUrl: 'https://api.minimax.chat',
    models: ['abab6.5-chat', 'abab6.5s-chat', 'abab5.5-chat', 'MiniMax-Text-01'],
  },
  { id: T.Dify, name: 'Dify', label: 'Dify', color: 'teal', offered: true, adaptor: 'dify', baseUrl: 'https://api.dify.ai', models: ['dify'] },
  {
    id: T.Jina,
    name: 'Jina',
    label: 'Jina',
    color: 'blue',
    offered: true,
    baseUrl: 'https://api.jina.ai',
    models: ['jina-clip-v1', 'jina-reranker-v2-base-multilingual', 'jina-embeddings-v3'],
  },
  {
    id: T.SiliconFlow,
    name: 'SiliconFlow',
    label: 'SiliconCloud',
    color: 'purple',
    offered: true,
    baseUrl: 'https://api.siliconflow.cn',
    balance: 'siliconflow',
    models: ['deepseek-ai/DeepSeek-V3', 'deepseek-ai/DeepSeek-R1', 'Qwen/Qwen2.5-72B-Instruct', 'BAAI/bge-m3', 'BAAI/bge-reranker-v2-m3'],
  },
  {
    id: T.Mistral,
    name: 'Mistral',
    label: 'Mistral',
    color: 'blue',
    offered: true,
    baseUrl: 'https://api.mistral.ai',
    models: ['mistral-large-latest', 'mistral-small-latest', 'open-mistral-nemo', 'codestral-latest', 'mistral-embed'],
  },
  { id: T.MokaAI, name: 'MokaAI', label: 'M3E', color: 'cyan', offered: true, baseUrl: 'https://api.moka.ai', models: ['m3e-base', 'm3e-large', 'm3e-small'] },
  {
    id: T.VolcEngine,
    name: 'VolcEngine',
    label: 'Volcano Ark',
    color: 'blue',
    offered: true,
    baseUrl: 'https://ark.cn-beijing.volces.com',
    apiPrefix: '/api/v3',
    keyHint: 'API Key',
    models: ['doubao-pro-32k', 'doubao-lite-32k', 'doubao-pro-128k', 'doubao-embedding'],
  },
  {
    id: T.Xinference,
    name: 'Xinference',
    label: 'Xinference',
    color: 'blue',
    offered: true,
    adaptor: 'xinference',
    models: ['qwen2.5-instruct', 'llama-3.1-instruct', 'bge-m3'],
  },
  {
    id: T.xAI,
    name: 'xAI',
    label: 'xAI',
    color: 'grey',
    offered: true,
    baseUrl: 'https://api.x.ai',
    models: ['grok-3', 'grok-3-mini', 'grok-4', 'grok-2-vision-1212'],
    responsesApi: true,
  },
  {
    id: T.Custom,
    name: 'Custom',
    label: 'custom',
    color: 'pink',
    offered: true,
    models: [],
    balance: 'openai-billing',
    form: {
      baseUrl: { label: 'res.channel.fields.full_base_url', placeholder: 'https://api.example.com/v1/{model}/chat/completions', required: true, fullUrl: true },
      hint: 'res.channel.hint.custom',
    },
  },
  // Not in the console's menu: older OpenAI resellers and kinds the product does not offer. They
  // stay valid so that channels stored with them keep their label and route (OpenAI-compatible).
  { id: T.OpenAIMax, name: 'OpenAIMax', label: 'OpenAIMax', color: 'grey', offered: false, baseUrl: 'https://api.openaimax.com', balance: 'openai-billing' },
  { id: T.OhMyGPT, name: 'OhMyGPT', label: 'OhMyGPT', color: 'grey', offered: false, baseUrl: 'https://api.ohmygpt.com', balance: 'openai-billing' },
  { id: T.AILS, name: 'AILS', label: 'AILS', color: 'grey', offered: false, baseUrl: 'https://api.caipacity.com', balance: 'openai-billing' },
  { id: T.AIProxy, name: 'AIProxy', label: 'AIProxy', color: 'grey', offered: false, baseUrl: 'https://api.aiproxy.io', balance: 'aiproxy' },
  { id: T.API2GPT, name: 'API2GPT', label: 'API2GPT', color: 'grey', offered: false, baseUrl: 'https://api.api2gpt.com', balance: 'openai-billing' },
  { id: T.AIGC2D, name: 'AIGC2D', label: 'AIGC2D', color: 'grey', offered: false, baseUrl: 'https://api.aigc2d.com', balance: 'openai-billing' },
  { id: T.Perplexity, name: 'Perplexity', label: 'Perplexity', color: 'grey', offered: false, baseUrl: 'https://api.perplexity.ai', apiPrefix: '' },
  { id: T.Coze, name: 'Coze', label: 'Coze', color: 'grey', offered: false, baseUrl: 'https://api.coze.cn' },
  { id: T.Kling, name: 'Kling', label: 'Kling', color: 'grey', offered: false },
  { id: T.Jimeng, name: 'Jimeng', label: 'Jimeng', color: 'grey', offered: false },
  { id: T.Vidu, name: 'Vidu', label: 'Vidu', color: 'grey', offered: false },
  { id: T.Submodel, name: 'Submodel', label: 'Submodel', color: 'grey', offered: false },
  { id: T.DoubaoVideo, name: 'DoubaoVideo', label: 'DoubaoVideo', color: 'grey', offered: false },
  { id: T.Sora, name: 'Sora', label: 'Sora', color: 'grey', offered: false },
  { id: T.Replicate, name: 'Replicate', label: 'Replicate', color: 'grey', offered: false },
];

const BY_ID = new Map<number, ChannelTypeEntry>(CHANNEL_TYPES.map((e) => [e.id, e]));

/** The entry of a type, or undefined for an unknown one. */
export function channelType(id: number): ChannelTypeEntry | undefined {
  return BY_ID.get(id);
}

/** Is `t` a type a channel may be created or saved with? (0 "unknown" and gaps are refused.) */
export function isKnownChannelType(t: number): boolean {
  return Number.isInteger(t) && BY_ID.has(t);
}

/** The adaptor serving a type (OpenAI-compatible unless the entry names another). */
export function adaptorIdOf(entry: ChannelTypeEntry): AdaptorId {
  return entry.adaptor ?? 'openai';
}

/** Every type one adaptor serves (its `channelTypes`). */
export function typesServedBy(adaptor: AdaptorId): number[] {
  return CHANNEL_TYPES.filter((e) => adaptorIdOf(e) === adaptor).map((e) => e.id);
}

/** Default base URL of a type ('' = the channel must name one). */
export function defaultBaseUrl(id: number): string {
  return BY_ID.get(id)?.baseUrl ?? '';
}

/** Does the kind's upstream have OpenAI's Responses API (the catalogue's fact, before any channel setting)? */
export function hasResponsesApi(id: number): boolean {
  return BY_ID.get(id)?.responsesApi === true;
}

/** Types whose balance is read the same way. */
export function typesWithBalance(kind: BalanceKind): Set<number> {
  return new Set(CHANNEL_TYPES.filter((e) => e.balance === kind).map((e) => e.id));
}

/** What GET /api/channel/types answers per type (console-facing facts only). */
export interface ConsoleChannelType {
  id: number;
  name: ChannelTypeName;
  label: string;
  color: TypeColor;
  offered: boolean;
  key_hint: string;
  json_key: boolean;
  predefined_models: boolean;
  /** why the provider's kind is no longer usable ('' for a live kind): the console shows it as retired, not offered for new channels */
  retired: string;
  fields: {
    organization?: boolean;
    base_url?: { label: string; placeholder?: string; required?: boolean; full_url?: boolean };
    other?: { label: string; placeholder?: string; default?: string; multiline?: boolean };
    strip_model_dots?: boolean;
    hint?: string;
  };
}

/** The console's channel-type catalogue, its words (a retired kind's reason) in `lang`. */
export function consoleChannelTypes(lang: Lang): ConsoleChannelType[] {
  return CHANNEL_TYPES.map((e) => {
    const f = e.form ?? {};
    const fields: ConsoleChannelType['fields'] = {};
    if (f.organization) fields.organization = true;
    if (f.baseUrl) {
      const { fullUrl, ...rest } = f.baseUrl;
      fields.base_url = fullUrl ? { ...rest, full_url: true } : rest;
    }
    if (f.other) fields.other = e.version ? { ...f.other, default: e.version.value } : { ...f.other };
    if (f.stripModelDots) fields.strip_model_dots = true;
    if (f.hint) fields.hint = f.hint;
    return {
      id: e.id,
      name: e.name,
      label: e.label,
      color: e.color,
      offered: e.offered,
      key_hint: e.keyHint ?? '',
      json_key: e.keyFormat === 'json',
      predefined_models: !!e.predefinedModels,
      retired: e.retired ? t(lang, e.retired) : '',
      fields,
    };
  });
}
