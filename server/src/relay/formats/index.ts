import type { InboundFormat, InboundRoute } from '../types';
import { openaiFormat } from './openai';
import { claudeFormat, claudeRoute } from './claude';
import { claudeCountTokensRoute } from './claudeCountTokens';
import { geminiFormat, geminiRoute } from './gemini';
import { geminiRoutes } from './geminiRoutes';

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
