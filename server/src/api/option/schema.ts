import { z } from 'zod';

export const putBody = z.object({
  key: z.string({ message: '无效的配置项' }).min(1, '无效的配置项').max(128),
  value: z.union([z.string(), z.number(), z.boolean()], { message: '配置值必须是字符串' }),
});
