/**
 * What the Claude tests share: a request shaped like current Claude Code's, and the field lists of
 * the protocols a converted request may carry.
 */
import { OPENAI_CHAT_REQUEST_FIELDS } from './protocolFields';

/** What current Claude Code sends: a system turn inside messages, adaptive thinking, effort, cache_control, betas' fields. */
export const CLAUDE_CODE_BODY = {
  model: 'claude-opus-4-8',
  max_tokens: 32000,
  system: [
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
    { type: 'text', text: 'Use the tools.', cache_control: { type: 'ephemeral' } },
  ],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'List the files.', cache_control: { type: 'ephemeral' } }] },
    { role: 'system', content: [{ type: 'text', text: 'Skills available: commit, review.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should run ls.', signature: 'sig-claude-1' },
        { type: 'redacted_thinking', data: 'ENCRYPTED' },
        { type: 'text', text: 'Running ls.' },
        { type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls' } },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_ls', content: [{ type: 'text', text: 'a.ts\nb.ts' }], cache_control: { type: 'ephemeral' } }],
    },
  ],
  tools: [
    {
      name: 'Bash',
      description: 'Run a command',
      input_schema: { type: 'object', properties: { command: { type: 'string' } } },
      cache_control: { type: 'ephemeral' },
    },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
  ],
  tool_choice: { type: 'auto' },
  thinking: { type: 'adaptive' },
  output_config: { effort: 'high' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  metadata: { user_id: 'user_abc123_account_def_session_0f0f0f0f' },
  stream: true,
  some_future_field: { x: 1 },
};

/** Top-level fields OpenAI's Chat Completions API defines (what an OpenAI upstream may receive). */
export const OPENAI_CHAT_FIELDS = OPENAI_CHAT_REQUEST_FIELDS;
/**
 * Claude wire names that must never leave a conversion. (Canonical `reasoning_details` on messages
 * are the OpenAI adaptor's to keep or drop, like the canonical-only top-level fields.)
 */
export const CLAUDE_ONLY =
  /cache_control|context_management|output_config|"thinking"|budget_tokens|web_search_20250305|redacted_thinking|"system":\[|some_future_field|user_abc123/;

/** Top-level fields of Gemini's GenerateContentRequest. */
export const GEMINI_REQUEST_FIELDS = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
  'labels',
]);
