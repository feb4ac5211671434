import { channelModelMap } from '../../services/channelModels';
import { turnstileCheck } from '../../services/turnstile';
import { sendPasswordReset, sendVerificationCode } from '../../services/users';
import { serverLang, statedLanguage, type Lang } from '../../i18n';
import type { AppContext } from '../../context';
import { ok, type ConsoleRoutes } from '../route';
import { emailQuery } from './schema';

/** Mails (verification code, password reset), group names and default models. */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  const bot = turnstileCheck(app);

  api.route(
    {
      method: 'get',
      path: '/api/verification',
      summary: 'Mail a 6-digit code for registration or email binding.',
      access: 'public',
      before: [bot],
      query: emailQuery,
    },
    async (ctx) => {
      await sendVerificationCode(app, ctx.ip, ctx.input.query.email, mailLang(app, ctx));
      ok(ctx, null, 'mail.code_sent');
    },
  );

  // The link's host comes from ServerAddress only, never from this request's Host.
  api.route(
    {
      method: 'get',
      path: '/api/reset_password',
      summary: 'Mail a one-time password-reset link (finished by POST /api/user/reset).',
      access: 'public',
      before: [bot],
      query: emailQuery,
    },
    async (ctx) => {
      await sendPasswordReset(app, ctx.ip, ctx.input.query.email, mailLang(app, ctx));
      ok(ctx, null, 'mail.reset_sent');
    },
  );

  api.route({ method: 'get', path: '/api/group/', summary: 'Group names (the keys of GroupRatio).', access: 'admin' }, (ctx) => {
    ok(ctx, Object.keys(app.options.json<Record<string, number>>('GroupRatio', {})));
  });

  api.route({ method: 'get', path: '/api/models', summary: 'Channel type → default model list.', access: 'user' }, (ctx) => {
    ok(ctx, channelModelMap());
  });
}

/** A mail goes out in the language the asking page was in; a caller that named none gets the server's. */
function mailLang(app: AppContext, ctx: { get(field: string): string }): Lang {
  return statedLanguage(ctx.get('accept-language')) ?? serverLang(app);
}
