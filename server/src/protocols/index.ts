import type { InboundFormat, InboundRoute } from '../relay/types';
import { openaiFormat } from './openai/format';
import { claudeFormat, claudeRoute } from './claude/format';
import { claudeCountTokensRoute } from './claude/countTokens';
import { geminiFormat, geminiRoute } from './gemini/format';
import { geminiRoutes } from './gemini/routes';

/** Client-facing formats by name. */
export const inboundFormats: Record<string, InboundFormat> = {
  openai: openaiFormat,
  claude: claudeFormat,
  gemini: geminiFormat,
};

/**
 * Routes of non-OpenAI client formats (Claude `/v1/messages`, Gemini `/v1beta/models/...`).
 * They are matched before the OpenAI routes. Add one line per route.
 */
export const inboundRoutes: InboundRoute[] = [claudeRoute, claudeCountTokensRoute, geminiRoute, ...geminiRoutes];
