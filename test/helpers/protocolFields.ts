/**
 * Request fields each provider's API defines, written from the published API references (the
 * OpenAI SDK's `ChatCompletionCreateParams`), kept apart from the gateway's own list
 * (server/src/protocols/openai/adaptor.ts) so the tests check the code against the API, not against
 * itself. Shared by the strict OpenAI mock, the wire checks, the golden invariants and the Claude
 * Code tests.
 */

/** Top-level fields of an OpenAI Chat Completions request. */
export const OPENAI_CHAT_REQUEST_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'moderation',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

/** Gemini's `Schema` (the OpenAPI 3.0 subset its `parameters` and `responseSchema` take). */
export const GEMINI_SCHEMA_FIELDS: ReadonlySet<string> = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

/** Gemini's `GenerationConfig`. */
export const GEMINI_GENERATION_CONFIG_FIELDS: ReadonlySet<string> = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'enableEnhancedCivicAnswers',
  'speechConfig',
  'thinkingConfig',
  'imageConfig',
  'mediaResolution',
  'audioTranscriptionConfig',
]);
