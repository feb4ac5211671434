/**
 * Default model lists per channel type (spec 000 §3 channel type ids), answered by GET /api/models
 * and used by the console to prefill a channel's models. Static on purpose: it is a suggestion
 * list, not a routing table (routing uses the abilities table).
 */
const OPENAI = [
  'gpt-3.5-turbo', 'gpt-3.5-turbo-0125', 'gpt-4', 'gpt-4-turbo', 'gpt-4o', 'gpt-4o-2024-11-20', 'gpt-4o-mini',
  'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'o1', 'o1-mini', 'o3', 'o3-mini', 'o4-mini',
  'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002', 'text-moderation-latest',
  'omni-moderation-latest', 'whisper-1', 'tts-1', 'tts-1-hd', 'dall-e-2', 'dall-e-3', 'gpt-image-1',
];
const CLAUDE = [
  'claude-3-haiku-20240307', 'claude-3-5-haiku-20241022', 'claude-3-5-sonnet-20241022', 'claude-3-7-sonnet-20250219',
  'claude-sonnet-4-20250514', 'claude-sonnet-4-5-20250929', 'claude-opus-4-20250514', 'claude-opus-4-1-20250805',
];
const GEMINI = ['gemini-1.5-pro', 'gemini-1.5-flash', 'gemini-2.0-flash', 'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'text-embedding-004'];
const MIDJOURNEY = ['mj_imagine', 'mj_variation', 'mj_reroll', 'mj_blend', 'mj_upscale', 'mj_describe', 'mj_shorten', 'mj_modal', 'mj_zoom', 'mj_custom_zoom', 'mj_high_variation', 'mj_low_variation', 'mj_pan', 'mj_uploads', 'swap_face'];

export const CHANNEL_MODELS: Readonly<Record<number, readonly string[]>> = {
  1: OPENAI,
  2: MIDJOURNEY,
  3: OPENAI.filter((m) => !m.startsWith('o1-mini')),
  4: ['llama3.1', 'llama3.2', 'qwen2.5', 'mistral', 'gemma2', 'deepseek-r1'],
  5: MIDJOURNEY,
  8: [],
  11: ['PaLM-2'],
  14: CLAUDE,
  15: ['ERNIE-4.0-8K', 'ERNIE-3.5-8K', 'ERNIE-Speed-128K', 'ERNIE-Lite-8K', 'Embedding-V1'],
  16: ['glm-4', 'glm-4-plus', 'glm-4-air', 'glm-4-flash', 'glm-4v', 'embedding-2'],
  17: ['qwen-turbo', 'qwen-plus', 'qwen-max', 'qwen-long', 'text-embedding-v1'],
  18: ['SparkDesk-v1.1', 'SparkDesk-v3.5', 'SparkDesk-v4.0', '4.0Ultra'],
  19: ['360GPT_S2_V9', 'embedding-bert-512-v1', 'embedding_s1_v1', 'semantic_similarity_s1_v1'],
  20: ['openai/gpt-4o', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'google/gemini-2.5-pro', 'deepseek/deepseek-chat'],
  21: ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet-20241022'],
  22: ['fastgpt'],
  23: ['hunyuan-lite', 'hunyuan-standard', 'hunyuan-pro', 'hunyuan-turbo'],
  24: GEMINI,
  25: ['moonshot-v1-8k', 'moonshot-v1-32k', 'moonshot-v1-128k'],
  26: ['glm-4', 'glm-4v', 'glm-4-plus', 'glm-4-flash', 'glm-4-air'],
  31: ['yi-large', 'yi-medium', 'yi-spark', 'yi-lightning', 'yi-vision'],
  33: ['claude-3-haiku-20240307', 'claude-3-5-haiku-20241022', 'claude-3-5-sonnet-20241022', 'claude-3-7-sonnet-20250219', 'claude-sonnet-4-20250514', 'claude-opus-4-20250514'],
  34: ['command-r', 'command-r-plus', 'command-r7b-12-2024', 'rerank-english-v3.0', 'rerank-multilingual-v3.0'],
  35: ['abab6.5-chat', 'abab6.5s-chat', 'abab5.5-chat', 'MiniMax-Text-01'],
  36: ['suno_music', 'suno_lyrics'],
  37: ['dify'],
  38: ['jina-clip-v1', 'jina-reranker-v2-base-multilingual', 'jina-embeddings-v3'],
  39: ['@cf/meta/llama-3.1-8b-instruct', '@cf/meta/llama-3-8b-instruct', '@cf/mistral/mistral-7b-instruct-v0.1', '@cf/qwen/qwen1.5-14b-chat-awq'],
  40: ['deepseek-ai/DeepSeek-V3', 'deepseek-ai/DeepSeek-R1', 'Qwen/Qwen2.5-72B-Instruct', 'BAAI/bge-m3', 'BAAI/bge-reranker-v2-m3'],
  41: [...CLAUDE.filter((m) => !m.startsWith('claude-3-haiku')), ...GEMINI],
  42: ['mistral-large-latest', 'mistral-small-latest', 'open-mistral-nemo', 'codestral-latest', 'mistral-embed'],
  43: ['deepseek-chat', 'deepseek-reasoner'],
  44: ['m3e-base', 'm3e-large', 'm3e-small'],
  45: ['doubao-pro-32k', 'doubao-lite-32k', 'doubao-pro-128k', 'doubao-embedding'],
  46: ['ernie-4.0-8k', 'ernie-3.5-8k', 'ernie-speed-128k', 'ernie-lite-8k'],
  47: ['qwen2.5-instruct', 'llama-3.1-instruct', 'bge-m3'],
  48: ['grok-3', 'grok-3-mini', 'grok-4', 'grok-2-vision-1212'],
};

/** The map as the console wants it: channel type (as a string key) → model names. */
export function channelModelMap(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [type, models] of Object.entries(CHANNEL_MODELS)) out[type] = [...models];
  return out;
}
