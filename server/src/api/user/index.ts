import { currentUser, assertNotCrossSite } from '../../middleware/auth';
import { parsePaging } from '../../lib/validate';
import { clientUser } from '../../repositories/users';
import { groupModels } from '../../repositories/channels';
import { turnstileCheck } from '../../services/turnstile';
import { adminCreateUser, adminUpdateUser, listUsers, manageUser, userForAdmin } from '../../services/userAdmin';
import {
  deleteSelf,
  ensureAffCode,
  passwordLogin,
  register as registerAccount,
  regenerateAccessToken,
  resetPassword,
  selfGroups,
  selfView,
  transferAffQuota,
  updateSelf,
  updateSetting,
} from '../../services/users';
import { endSession, endUserSessions, sessionId, startSession } from '../../services/sessions';
import { requireFreshVerification } from '../../services/secureVerification';
import { startPendingLogin } from '../../services/twoFactor';
import { isTwoFactorEnabled } from '../../repositories/twoFactor';
import { registerSecurity } from './security';
import { idParams, ok, type ConsoleRoutes } from '../route';
import {
  affTransferBody,
  createBody,
  listQuery,
  loginBody,
  manageBody,
  registerBody,
  resetBody,
  searchQuery,
  selfBody,
  settingBody,
  updateBody,
} from './schema';
import { requestLang } from '../../i18n';

export function register(api: ConsoleRoutes): void {
  const { app } = api;
  const bot = turnstileCheck(app);
  // 2FA, passkeys, re-verification: their fixed paths come before `/api/user/:id`.
  registerSecurity(api);

  /* ---------------------------------------------------------------- login / registration */
  api.route(
    { method: 'post', path: '/api/user/login', summary: 'Log in with a password; sets the session cookie.', access: 'public', before: [bot], body: loginBody },
    async (ctx) => {
      assertNotCrossSite(ctx);
      let needsCode = false;
      const u = await passwordLogin(
        app,
        ctx.ip,
        ctx.input.body.username,
        ctx.input.body.password,
        async (user) => (needsCode = await isTwoFactorEnabled(app.knex, user.id)),
      );
      if (needsCode) {
        // No session yet: the code goes to POST /api/user/login/2fa from this browser.
        await startPendingLogin(app, ctx, u, ctx.ip);
        ok(ctx, { require_2fa: true }, '2fa.enter_code');
        return;
      }
      await startSession(app, ctx, u);
      ok(ctx, clientUser(u, { owner: true }), 'user.login_ok');
    },
  );

  // Cookie-only on purpose: it can only end the caller's own session (the console also sends it
  // after forgetting the user id). Ends the session on the server, not just the cookie.
  api.route({ method: 'get', path: '/api/user/logout', summary: "End the caller's session.", access: 'public' }, async (ctx) => {
    await endSession(app, ctx);
    ok(ctx, null);
  });

  api.route({ method: 'post', path: '/api/user/logout_all', summary: 'End every session of the caller, on every node.', access: 'user' }, async (ctx) => {
    await endUserSessions(app, currentUser(ctx).id);
    ctx.session = null;
    ok(ctx, null, 'user.logged_out_everywhere');
  });

  api.route(
    { method: 'post', path: '/api/user/register', summary: 'Register an account.', access: 'public', before: [bot], body: registerBody },
    async (ctx) => {
      await registerAccount(app, ctx.input.body);
      ok(ctx, null, 'user.registered');
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/user/reset',
      summary: 'Finish a password reset from the mailed link; answers the new password.',
      access: 'public',
      body: resetBody,
    },
    async (ctx) => {
      const password = await resetPassword(app, ctx.input.body.email, ctx.input.body.token);
      ok(ctx, password, 'user.password_reset_shown');
    },
  );

  /* ---------------------------------------------------------------- self */
  api.route({ method: 'get', path: '/api/user/self', summary: 'The caller.', access: 'user' }, async (ctx) => {
    ok(ctx, await selfView(app, currentUser(ctx)));
  });

  api.route(
    { method: 'put', path: '/api/user/self', summary: "Change the caller's display name or password.", access: 'user', body: selfBody },
    async (ctx) => {
      const r = await updateSelf(app, currentUser(ctx), ctx.input.body);
      // Every session ended in updateSelf; a cookie caller goes on under a fresh session id (an
      // access-token caller gets no cookie).
      if (r.passwordChanged && sessionId(ctx)) await startSession(app, ctx, currentUser(ctx));
      ok(ctx, null, r.passwordChanged ? 'user.password_changed' : 'common.updated');
    },
  );

  api.route({ method: 'delete', path: '/api/user/self', summary: "Delete the caller's account (needs re-verification).", access: 'user' }, async (ctx) => {
    await requireFreshVerification(app, ctx, currentUser(ctx));
    await deleteSelf(app, currentUser(ctx));
    ctx.session = null;
    ok(ctx, null, 'user.account_deleted');
  });

  api.route({ method: 'get', path: '/api/user/token', summary: 'Issue a new system access token (needs re-verification).', access: 'user' }, async (ctx) => {
    await requireFreshVerification(app, ctx, currentUser(ctx));
    ok(ctx, await regenerateAccessToken(app, currentUser(ctx).id));
  });

  api.route({ method: 'get', path: '/api/user/aff', summary: "The caller's invitation code.", access: 'user' }, async (ctx) => {
    ok(ctx, await ensureAffCode(app, currentUser(ctx)));
  });

  api.route(
    { method: 'post', path: '/api/user/aff_transfer', summary: 'Move invitation reward quota to the balance.', access: 'user', body: affTransferBody },
    async (ctx) => {
      await transferAffQuota(app, currentUser(ctx), ctx.input.body.quota);
      ok(ctx, null, 'user.transferred');
    },
  );

  api.route({ method: 'put', path: '/api/user/setting', summary: 'Notification and price settings.', access: 'user', body: settingBody }, async (ctx) => {
    ok(ctx, await updateSetting(app, currentUser(ctx), ctx.input.body), 'user.notify_updated');
  });

  api.route({ method: 'get', path: '/api/user/self/groups', summary: 'Groups the caller may use, with ratios.', access: 'user' }, async (ctx) => {
    ok(ctx, selfGroups(app, currentUser(ctx), requestLang(ctx)));
  });

  api.route({ method: 'get', path: '/api/user/models', summary: "Models of the caller's group.", access: 'user' }, async (ctx) => {
    ok(ctx, await groupModels(app.knex, currentUser(ctx).group));
  });

  /* ---------------------------------------------------------------- administration */
  api.route({ method: 'get', path: '/api/user/', summary: 'List users (paged).', access: 'admin', query: listQuery }, async (ctx) => {
    ok(ctx, await listUsers(app, parsePaging(ctx.query)));
  });

  api.route({ method: 'get', path: '/api/user/search', summary: 'Search users by keyword and group.', access: 'admin', query: searchQuery }, async (ctx) => {
    const paging = parsePaging(ctx.query);
    ok(ctx, await listUsers(app, paging, { keyword: ctx.input.query.keyword, group: ctx.input.query.group }));
  });

  api.route(
    { method: 'post', path: '/api/user/manage', summary: 'Promote, demote, disable, enable or delete a user.', access: 'admin', body: manageBody },
    async (ctx) => {
      ok(ctx, await manageUser(app, currentUser(ctx), ctx.input.body.id, ctx.input.body.action), 'common.done_en');
    },
  );

  api.route({ method: 'post', path: '/api/user/', summary: 'Create a user.', access: 'admin', body: createBody }, async (ctx) => {
    const created = await adminCreateUser(app, currentUser(ctx), ctx.input.body);
    ok(ctx, clientUser(created), 'user.created');
  });

  api.route(
    { method: 'put', path: '/api/user/', summary: 'Update a user; fields left out keep their value.', access: 'admin', body: updateBody },
    async (ctx) => {
      const input = ctx.input.body;
      const updated = await adminUpdateUser(app, currentUser(ctx), input);
      // Root setting its own password here keeps its session, like a self password change.
      if (input.password && updated.id === currentUser(ctx).id && sessionId(ctx)) await startSession(app, ctx, updated);
      ok(ctx, clientUser(updated), 'common.updated');
    },
  );

  // Only numeric ids: other /api/user/<word> routes belong to other areas.
  api.route(
    { method: 'get', path: '/api/user/:id', summary: 'One user (never one of the same or a higher role).', access: 'admin', params: idParams },
    async (ctx) => {
      ok(ctx, await userForAdmin(app, currentUser(ctx), ctx.input.params.id));
    },
  );
}
