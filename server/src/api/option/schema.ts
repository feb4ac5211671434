import { z } from 'zod';

export const putBody = z.object({
  key: z.string({ message: 'option.invalid_key' }).min(1, 'option.invalid_key').max(128),
  value: z.union([z.string(), z.number(), z.boolean()], { message: 'option.value_not_string' }),
});
