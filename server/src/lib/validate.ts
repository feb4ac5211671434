import { z } from 'zod';
import { fromZodText, msg, verbatim, zmsg, type Message } from '../i18n';
import { BadRequestError } from './errors';

const english = z.locales.en().localeError;

/**
 * The one error map of the console's input checks. A rule that carries its own message (a
 * catalogue key, or `zmsg(key, params)`: the console shows the product's wording, e.g. "priority
 * must be an integer") is answered in the caller's language: zod consults this map only for issues
 * whose rule has no message of its own. Those generic issues read `Invalid parameter: <field>:
 * <zod's English text>` (参数错误：… in Chinese), so the field stays visible.
 */
export const inputErrorMap: z.core.$ZodErrorMap = (issue) => {
  const where = issue.path?.length ? `${issue.path.join('.')}: ` : '';
  const generic = english(issue);
  const text = typeof generic === 'string' ? generic : (generic?.message ?? 'Invalid input');
  return zmsg('input.invalid_field', { detail: `${where}${text}` });
};

/** Parses input with a zod schema; any problem becomes a BadRequestError with the first issue's message. */
export function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input, { error: inputErrorMap });
  if (result.success) return result.data;
  throw new BadRequestError(describeZodError(result.error));
}

/** The message of a failed check: its first issue (worded by its rule or by `inputErrorMap`). */
export function describeZodError(error: z.ZodError): Message {
  const text = error.issues[0]?.message;
  if (text === undefined) return msg('input.invalid');
  // A rule's own message that is not a catalogue key is answered as written.
  return fromZodText(text) ?? verbatim(text);
}

/**
 * An integer given as a JSON number or as a numeric string (forms often send strings); anything
 * else (`1.5`, `"abc"`, a huge number) gets `message`.
 */
export const intLike = (message: string /* a catalogue key or zmsg(…) */) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v),
    z.number({ error: message }).int(message).min(-1e15, message).max(1e15, message),
  );

/** Query-string helpers: numbers arrive as strings. */
export const qInt = (def?: number) => z.preprocess((v) => (v === undefined || v === '' ? def : Number(v)), z.number().int().finite());
export const qIntOpt = () => z.preprocess((v) => (v === undefined || v === '' ? undefined : Number(v)), z.number().int().finite().optional());
export const qStr = () => z.string().max(512).optional().default('');
export const qBool = () => z.preprocess((v) => v === 'true' || v === '1' || v === true, z.boolean());

/** Paging: `p` (1-based) and `page_size` (tokens also accept `size`; `page` and `pageSize` are aliases). */
export const pagingSchema = z.object({
  p: qInt(1).pipe(z.number().int().min(1).max(1_000_000)),
  page_size: qInt(10).pipe(z.number().int().min(1).max(100)),
});
export type Paging = z.infer<typeof pagingSchema>;

/** The paging fields as they may arrive in a query string (documented; parsed by `parsePaging`). */
export const pagingQuery = z.object({
  p: z.string().optional(),
  page: z.string().optional(),
  page_size: z.string().optional(),
  size: z.string().optional(),
  pageSize: z.string().optional(),
});

export function parsePaging(query: Record<string, unknown>): Paging {
  return parse(pagingSchema, {
    p: query.p ?? query.page,
    page_size: query.page_size ?? query.size ?? query.pageSize,
  });
}

/**
 * The one parser of numeric path ids: a positive 31-bit integer written in digits, else undefined
 * (routes with a numeric `:id` fall through on anything else, so words reach other routes).
 */
export function parseId(raw: string | undefined): number | undefined {
  if (!raw || !/^\d{1,10}$/.test(raw)) return undefined;
  const id = Number(raw);
  return id > 0 && id < 2 ** 31 ? id : undefined;
}
