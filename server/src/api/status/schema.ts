import { z } from 'zod';

/** The root account of the first-run setup (checked only while no root user exists). */
export const rootAccountBody = z.object({
  username: z.string().trim().min(1, '请输入管理员用户名').max(12, '用户名长度不能超过 12 个字符'),
  password: z.string().min(8, '密码长度至少为8个字符').max(20, '密码长度不能超过 20 个字符'),
  confirmPassword: z.string(),
});

export const setupModesBody = z.object({
  SelfUseModeEnabled: z.boolean().optional().default(false),
  DemoSiteEnabled: z.boolean().optional().default(false),
});

/** What POST /api/setup documents: the modes, and the root account while none exists. */
export const setupBody = rootAccountBody.partial().extend(setupModesBody.shape);
