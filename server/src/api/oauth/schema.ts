import { z } from 'zod';

/** These routes read their query fields themselves (the fields vary by provider); the schemas document them. */
export const stateQuery = z.object({ aff: z.string().optional() });
export const authorizeQuery = z.object({ aff: z.string().optional() });
export const callbackQuery = z.object({ state: z.string(), code: z.string() });
export const codeQuery = z.object({ code: z.string(), aff: z.string().optional() });
export const emailBindQuery = z.object({ email: z.string(), code: z.string() });
/** The Telegram login widget's signed fields, plus our state. */
export const telegramFields = z.object({
  id: z.string(),
  first_name: z.string().optional(),
  username: z.string().optional(),
  auth_date: z.string(),
  hash: z.string(),
  state: z.string().optional(),
});
export const discoveryBody = z.object({ well_known: z.string().optional() });
