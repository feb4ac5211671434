import type Router from '@koa/router';
import { z } from 'zod';
import type { AppContext } from '../context';
import { parse } from '../lib/validate';
import { requireAdmin, requireUser } from '../middleware/auth';
import { channelModelMap } from '../services/channelModels';
import { turnstileCheck } from '../services/turnstile';
import { sendPasswordReset, sendVerificationCode } from '../services/users';

const emailQuery = z.object({ email: z.string().max(256).optional().default('') });

export function register(router: Router, app: AppContext): void {
  const bot = turnstileCheck(app);

  /** Mails a 6-digit code for registration / email binding (spec 000 §7). */
  router.get('/api/verification', bot, async (ctx) => {
    const { email } = parse(emailQuery, ctx.query);
    await sendVerificationCode(app, ctx.ip, email);
    ctx.body = { success: true, message: 'Verification code sent, please check your email!', data: null };
  });

  /** Mails a one-time password-reset link (answered on POST /api/user/reset). */
  router.get('/api/reset_password', bot, async (ctx) => {
    const { email } = parse(emailQuery, ctx.query);
    // The link's host comes from ServerAddress only, never from this request's Host.
    await sendPasswordReset(app, ctx.ip, email);
    ctx.body = { success: true, message: '重置邮件发送成功，请检查邮箱！', data: null };
  });

  /** Group names (admin): the keys of GroupRatio. */
  router.get('/api/group/', requireAdmin(app), async (ctx) => {
    ctx.body = { success: true, message: '', data: Object.keys(app.options.json<Record<string, number>>('GroupRatio', {})) };
  });

  /** Channel type → default model list (cached by the console as channel_models). */
  router.get('/api/models', requireUser(app), async (ctx) => {
    ctx.body = { success: true, message: '', data: channelModelMap() };
  });
}
