import { z } from 'zod';

/** The root account of the first-run setup (checked only while no root user exists). */
export const rootAccountBody = z.object({
  username: z.string().trim().min(1, 'setup.username_required').max(12, 'user.username_long'),
  password: z.string().min(8, 'setup.password_short').max(20, 'user.password_long'),
  confirmPassword: z.string(),
});

export const setupModesBody = z.object({
  SelfUseModeEnabled: z.boolean().optional().default(false),
  DemoSiteEnabled: z.boolean().optional().default(false),
});

/** What POST /api/setup documents: the modes, and the root account while none exists. */
export const setupBody = rootAccountBody.partial().extend(setupModesBody.shape);
