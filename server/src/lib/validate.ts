import { z } from 'zod';
import { BadRequestError } from './errors';

/** Parses input with a zod schema; any problem becomes a BadRequestError with a readable message. */
export function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new BadRequestError(describeZodError(result.error));
}

export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return '参数错误';
  const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
  return `参数错误：${where}${issue.message}`;
}

/** Query-string helpers: numbers arrive as strings. */
export const qInt = (def?: number) =>
  z.preprocess((v) => (v === undefined || v === '' ? def : Number(v)), z.number().int().finite());
export const qIntOpt = () =>
  z.preprocess((v) => (v === undefined || v === '' ? undefined : Number(v)), z.number().int().finite().optional());
export const qStr = () => z.string().max(512).optional().default('');
export const qBool = () => z.preprocess((v) => v === 'true' || v === '1' || v === true, z.boolean());

/** Paging per contract: `p` (1-based) and `page_size` (tokens also accept `size`). */
export const pagingSchema = z.object({
  p: qInt(1).pipe(z.number().int().min(1).max(1_000_000)),
  page_size: qInt(10).pipe(z.number().int().min(1).max(100)),
});
export type Paging = z.infer<typeof pagingSchema>;

export function parsePaging(query: Record<string, unknown>): Paging {
  return parse(pagingSchema, {
    p: query.p ?? query.page,
    page_size: query.page_size ?? query.size ?? query.pageSize,
  });
}
