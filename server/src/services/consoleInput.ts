import type { z } from 'zod';
import { BadRequestError } from '../lib/errors';
import { describeZodError } from '../lib/validate';

const hasCjk = /[\u3400-\u9fff]/;

/**
 * Like lib/validate `parse`, but a rule's own (Chinese) message is shown exactly as written, since
 * the console displays the spec's wording (e.g. 优先级必须是整数！). zod's generic English messages
 * keep the path prefix so they stay readable.
 */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue && hasCjk.test(issue.message)) throw new BadRequestError(issue.message);
  throw new BadRequestError(describeZodError(result.error));
}
