import { z } from 'zod';

export const emailQuery = z.object({ email: z.string().max(256).optional().default('') });
