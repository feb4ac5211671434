import type Koa from 'koa';
import type { AppContext } from '../../context';
import { BadRequestError, UnauthorizedError } from '../../lib/errors';
import { assertNotCrossSite, currentUser } from '../../middleware/auth';
import type { UserRow } from '../../repositories/users';
import { rateLimit } from '../../middleware/rateLimit';
import { sessionUser, startSession } from '../../services/sessions';
import { bindEmail } from '../../services/users';
import { assertActive, assertEnabled, bindIdentity, loginOrRegister, loginView, type IdentityProvider } from '../../services/oauth/identity';
import {
  callbackUrl,
  discoverOidc,
  githubAuthorizeUrl,
  githubProfile,
  linuxdoAuthorizeUrl,
  linuxdoProfile,
  oidcAuthorizeUrl,
  oidcProfile,
  verifyTelegram,
  wechatOpenId,
  type ExternalProfile,
  type RedirectProvider,
} from '../../services/oauth/providers';
import { BAD_STATE_MESSAGE, STATE_TTL_SECONDS, issueState, takeState } from '../../services/oauth/state';
import { randomString } from '../../lib/random';
import { verbatim } from '../../i18n';
import { ok, type ConsoleRoutes } from '../route';
import { authorizeQuery, callbackQuery, codeQuery, discoveryBody, emailBindQuery, stateQuery, telegramFields } from './schema';

/** First value of a query parameter as a trimmed string ('' when absent or not a string). */
function q(ctx: Koa.Context, name: string): string {
  const v = ctx.query[name];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s === 'string' ? s.trim() : '';
}

/** The session's user for a binding, or undefined when nobody is logged in (an ended session is nobody). */
async function loggedInUser(app: AppContext, ctx: Koa.Context): Promise<UserRow | undefined> {
  const user = await sessionUser(app, ctx, true);
  if (user) assertActive(user);
  return user;
}

async function logIn(app: AppContext, ctx: Koa.Context, user: UserRow) {
  await startSession(app, ctx, user);
  ok(ctx, loginView(user));
}

/** Provider name of states that may only bind Telegram (issued by POST /api/oauth/telegram/bind_state). */
const TELEGRAM_BIND = 'telegram_bind';

/** A binding answers the word `bind` (what the console checks), in every language. */
const BOUND = verbatim('bind');

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Runs a handler written for Koa's context (these read the raw query: their fields vary by provider). */
const koa = (handler: (ctx: Koa.Context, next: Koa.Next) => unknown) => async (ctx: unknown) => {
  await handler(ctx as Koa.Context, async () => {});
};

/** Per-IP cap on identity calls (each state is a KV entry; each callback calls a provider). */
export const OAUTH_RATE_LIMIT = { limit: 300, windowSeconds: 300 };

export function register(api: ConsoleRoutes): void {
  const { app, router } = api;
  const limited = rateLimit(app, 'oauth', OAUTH_RATE_LIMIT.limit, OAUTH_RATE_LIMIT.windowSeconds);
  router.use('/api/oauth', limited);
  /** One-time state for the authorization redirect; `?aff=` rides along. */
  api.route(
    { method: 'get', path: '/api/oauth/state', summary: 'A one-time state for an authorization redirect.', access: 'public', documentedQuery: stateQuery },
    koa(async (ctx) => {
      const { state } = await issueState(app, ctx, { aff: q(ctx, 'aff') });
      ok(ctx, state);
    }),
  );

  // Server-built authorization redirects (state bound to the session; PKCE for OIDC).
  const authorizers: Record<RedirectProvider, (state: string, record: Awaited<ReturnType<typeof issueState>>['record']) => Promise<string> | string> = {
    github: (state, record) => githubAuthorizeUrl(app, state, record.redirectUri!),
    linuxdo: (state, record) => linuxdoAuthorizeUrl(app, state, record.redirectUri!),
    oidc: (state, record) => oidcAuthorizeUrl(app, state, record),
  };
  for (const provider of ['github', 'linuxdo', 'oidc'] as const) {
    api.route(
      {
        method: 'get',
        path: `/api/oauth/${provider}/authorize`,
        summary: `Redirect to ${provider}'s authorization page.`,
        access: 'public',
        documentedQuery: authorizeQuery,
      },
      koa(async (ctx) => {
        assertEnabled(app, provider);
        const { state, record } = await issueState(app, ctx, {
          aff: q(ctx, 'aff'),
          provider,
          pkce: provider === 'oidc',
          redirectUri: callbackUrl(app, `${ctx.protocol}://${ctx.host}`, provider),
        });
        ctx.redirect(await authorizers[provider](state, record));
      }),
    );
  }

  /** Callback of the redirect logins: login, registration or binding. */
  const callback =
    (provider: RedirectProvider): Koa.Middleware =>
    async (ctx) => {
      assertEnabled(app, provider);
      const record = await takeState(app, ctx, q(ctx, 'state'), provider);
      const code = q(ctx, 'code');
      if (!code) throw new BadRequestError('oauth.code_missing');
      const bindTo = await loggedInUser(app, ctx);
      if (bindTo && record.uid && record.uid !== Number(bindTo.id)) throw new BadRequestError(BAD_STATE_MESSAGE);
      const redirectUri = record.redirectUri ?? callbackUrl(app, `${ctx.protocol}://${ctx.host}`, provider);
      let profile: ExternalProfile;
      if (provider === 'github') profile = await githubProfile(app, code);
      else if (provider === 'linuxdo') profile = await linuxdoProfile(app, code, redirectUri);
      else profile = await oidcProfile(app, code, redirectUri, record.verifier);
      if (bindTo) {
        await bindIdentity(app, provider, profile, Number(bindTo.id));
        ok(ctx, null, BOUND);
        return;
      }
      const { user } = await loginOrRegister(app, provider, profile, { aff: record.aff });
      await logIn(app, ctx, user);
    };
  for (const provider of ['github', 'linuxdo', 'oidc'] as const) {
    api.route(
      {
        method: 'get',
        path: `/api/oauth/${provider}`,
        summary: `Callback of the ${provider} login: login, registration or binding.`,
        access: 'public',
        documentedQuery: callbackQuery,
      },
      koa(callback(provider)),
    );
  }

  /** Root: fetch the well-known document and store the endpoints it names. */
  api.route(
    {
      method: 'post',
      path: '/api/oauth/oidc/discovery',
      summary: 'Fetch the OIDC well-known document and store its endpoints.',
      access: 'root',
      documentedBody: discoveryBody,
    },
    koa(async (ctx) => {
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      const given = typeof body.well_known === 'string' ? body.well_known.trim() : '';
      const wellKnown = given || app.options.get('oidc.well_known').trim();
      const endpoints = await discoverOidc(app, wellKnown);
      // Only a URL that worked is kept.
      if (given) await app.options.set('oidc.well_known', given);
      ok(ctx, endpoints);
    }),
  );

  // WeChat: the code shown by the official account (valid 3 minutes) is exchanged with the WeChat server.
  const wechatProfile = async (ctx: Koa.Context) => {
    assertEnabled(app, 'wechat');
    const code = q(ctx, 'code');
    if (!code) throw new BadRequestError('oauth.verification_code_missing');
    return wechatOpenId(app, code);
  };
  api.route(
    {
      method: 'get',
      path: '/api/oauth/wechat/bind',
      summary: 'Bind WeChat to the caller with the code the official account showed.',
      access: 'user',
      documentedQuery: codeQuery,
    },
    koa(async (ctx) => {
      const user = currentUser(ctx);
      const profile = await wechatProfile(ctx);
      await bindIdentity(app, 'wechat', profile, Number(user.id));
      ok(ctx, null);
    }),
  );
  api.route(
    {
      method: 'get',
      path: '/api/oauth/wechat',
      summary: 'Log in with the code the WeChat official account showed.',
      access: 'public',
      documentedQuery: codeQuery,
    },
    koa(async (ctx) => {
      assertNotCrossSite(ctx);
      const profile = await wechatProfile(ctx);
      const { user } = await loginOrRegister(app, 'wechat', profile, { aff: q(ctx, 'aff') });
      await logIn(app, ctx, user);
    }),
  );

  // Telegram login widget: the console passes the widget's fields; binding is the widget's auth URL.
  const telegramProfile = (ctx: Koa.Context) => {
    assertEnabled(app, 'telegram' satisfies IdentityProvider);
    return verifyTelegram(app.options.get('TelegramBotToken'), ctx.query as Record<string, unknown>);
  };
  api.route(
    {
      method: 'get',
      path: '/api/oauth/telegram/login',
      summary: 'Telegram widget login (a browser navigation is redirected to the console).',
      access: 'public',
      documentedQuery: telegramFields,
    },
    koa(async (ctx) => {
      if (ctx.accepts('json', 'html') === 'html') {
        // The widget's data-auth-url navigated the browser here. Hand the widget data to the
        // console's callback page (/oauth/telegram?code&state) under a one-time code; the page
        // then calls GET /api/oauth/telegram like the other callbacks and shows the outcome.
        assertEnabled(app, 'telegram');
        // The console put a state of this session (GET /api/oauth/state) in the auth URL: a link on
        // another site carrying someone's widget data has none, so it cannot log this browser into
        // that account (login CSRF).
        await takeState(app, ctx, q(ctx, 'state'), 'telegram');
        const fields: Record<string, string> = {};
        for (const key of Object.keys(ctx.query)) if (key.length <= 32 && key !== 'state') fields[key] = q(ctx, key).slice(0, 512);
        const { state } = await issueState(app, ctx, { provider: 'telegram' });
        const code = randomString(32);
        await app.kv.set(`oauth:telegram:${code}`, JSON.stringify(fields), STATE_TTL_SECONDS);
        ctx.redirect(`/oauth/telegram?${new URLSearchParams({ code, state })}`);
        return;
      }
      assertNotCrossSite(ctx);
      const profile = telegramProfile(ctx);
      const { user } = await loginOrRegister(app, 'telegram', profile, { allowRegister: false });
      await logIn(app, ctx, user);
    }),
  );
  /**
   * Callback of the navigation flow above: login only. It never binds: the widget data and the
   * state both arrive through a navigation anybody can start (a link on another site carrying the
   * attacker's signed widget data), so binding goes through /bind_state + /bind below instead.
   */
  api.route(
    {
      method: 'get',
      path: '/api/oauth/telegram',
      summary: 'Finish a Telegram login from its one-time code.',
      access: 'public',
      documentedQuery: callbackQuery,
    },
    koa(async (ctx) => {
      assertEnabled(app, 'telegram');
      await takeState(app, ctx, q(ctx, 'state'), 'telegram');
      const raw = q(ctx, 'code') ? await app.kv.take(`oauth:telegram:${q(ctx, 'code')}`) : null;
      if (!raw) throw new BadRequestError('oauth.telegram_data_stale');
      const profile = verifyTelegram(app.options.get('TelegramBotToken'), JSON.parse(raw) as Record<string, unknown>);
      const { user } = await loginOrRegister(app, 'telegram', profile, { allowRegister: false });
      await logIn(app, ctx, user);
    }),
  );

  /**
   * Binding, step 1: the console (New-Api-User header, so never another site) asks for a one-time
   * state bound to this session and user; it puts it in the widget's auth URL.
   */
  api.route(
    { method: 'post', path: '/api/oauth/telegram/bind_state', summary: 'A one-time state for binding Telegram to the caller.', access: 'user' },
    koa(async (ctx) => {
      assertEnabled(app, 'telegram');
      const { state } = await issueState(app, ctx, { provider: TELEGRAM_BIND });
      ok(ctx, state);
    }),
  );
  /** Binding, step 2: the widget navigates the browser here with its signed fields and our state. */
  api.route(
    {
      method: 'get',
      path: '/api/oauth/telegram/bind',
      summary: 'Bind Telegram from the widget navigation (session cookie).',
      access: 'public',
      documentedQuery: telegramFields,
    },
    koa(async (ctx) => {
      const user = await loggedInUser(app, ctx);
      if (!user) throw new UnauthorizedError();
      assertEnabled(app, 'telegram');
      const record = await takeState(app, ctx, q(ctx, 'state'), TELEGRAM_BIND);
      if (record.provider !== TELEGRAM_BIND || record.uid !== Number(user.id)) throw new BadRequestError(BAD_STATE_MESSAGE);
      const fields = { ...(ctx.query as Record<string, unknown>) };
      delete fields.state;
      const profile = verifyTelegram(app.options.get('TelegramBotToken'), fields);
      await bindIdentity(app, 'telegram', profile, Number(user.id));
      // The widget navigates the browser here: send it back to the settings page.
      if (ctx.accepts('json', 'html') === 'html') {
        ctx.redirect('/setting');
        return;
      }
      ok(ctx, null, BOUND);
    }),
  );

  /** Email binding with a code from GET /api/verification. */
  api.route(
    {
      method: 'get',
      path: '/api/oauth/email/bind',
      summary: 'Bind an email with a code from GET /api/verification.',
      access: 'user',
      documentedQuery: emailBindQuery,
    },
    koa(async (ctx) => {
      const user = currentUser(ctx);
      const email = q(ctx, 'email');
      const code = q(ctx, 'code');
      if (!email) throw new BadRequestError('oauth.email_required');
      if (!code) throw new BadRequestError('oauth.email_code_required');
      if (email.length > 128 || !EMAIL_RE.test(email)) throw new BadRequestError('user.email_invalid');
      await bindEmail(app, user, email, code);
      ok(ctx, null);
    }),
  );
}
