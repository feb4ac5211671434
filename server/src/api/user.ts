import type Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { parse, parsePaging, qStr } from '../lib/validate';
import { assertNotCrossSite, currentUser, requireAdmin, requireUser } from '../middleware/auth';
import { clientUser, findUserByIdWithDeleted, queryUsers } from '../repositories/users';
import { turnstileCheck } from '../services/turnstile';
import {
  adminCreateUser,
  adminUpdateUser,
  deleteSelf,
  ensureAffCode,
  manageUser,
  passwordLogin,
  register as registerAccount,
  regenerateAccessToken,
  resetPassword,
  transferAffQuota,
  updateSelf,
  updateSetting,
} from '../services/users';
import { endSession, endUserSessions, sessionId, startSession } from '../services/sessions';

const ok = (ctx: Koa.Context, data: unknown = null, message = '') => {
  ctx.body = { success: true, message, data };
};
const body = (ctx: Koa.Context) => (ctx.request.body ?? {}) as Record<string, unknown>;

const str = (max: number) => z.string().max(max, `长度不能超过 ${max} 个字符`);
/** Optional string field; null (sent by some forms for empty fields) counts as left out. */
const optStr = (max: number) => z.preprocess((v) => (v === null ? undefined : v), str(max).optional());
/** Integer from a number or a numeric string (the console parses quota to an integer). */
const intLike = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
  z.number({ message: '必须是整数' }).int('必须是整数').refine(Number.isSafeInteger, '数值过大'),
);

const loginBody = z.object({ username: str(128).optional().default(''), password: str(128).optional().default('') });
const registerBody = z.object({
  username: str(64).optional().default(''),
  password: str(128).optional().default(''),
  password2: optStr(128),
  email: optStr(128),
  verification_code: optStr(32),
  aff_code: optStr(32),
});
const selfBody = z.object({
  display_name: optStr(64),
  password: optStr(128),
  original_password: optStr(128),
  password2: optStr(128),
});
const settingBody = z.object({
  notify_type: z.string().max(16).optional(),
  quota_warning_threshold: z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number().finite()).optional(),
  webhook_url: optStr(1024),
  webhook_secret: optStr(512),
  notification_email: optStr(128),
  accept_unset_model_ratio_model: z.preprocess((v) => (v === null ? undefined : v === 'true' ? true : v === 'false' ? false : v), z.boolean().optional()),
});
const createBody = z.object({
  username: str(64).optional().default(''),
  password: str(128).optional().default(''),
  display_name: optStr(64),
  role: z.number().int().optional(),
});
const updateBody = z.object({
  id: intLike,
  username: optStr(64),
  display_name: optStr(64),
  password: optStr(128),
  email: optStr(128),
  group: optStr(64),
  quota: z.preprocess((v) => (v === null ? undefined : v), intLike.optional()),
  remark: optStr(255),
});
const manageBody = z.object({
  id: intLike,
  action: z.enum(['promote', 'demote', 'disable', 'enable', 'delete'], { message: '无效的操作' }),
});

export function register(router: Router, app: AppContext): void {
  const user = requireUser(app);
  const admin = requireAdmin(app);
  const bot = turnstileCheck(app);

  /* ---------------------------------------------------------------- login / registration */
  router.post('/api/user/login', bot, async (ctx) => {
    assertNotCrossSite(ctx);
    const input = parse(loginBody, body(ctx));
    const u = await passwordLogin(app, ctx.ip, input.username, input.password);
    await startSession(app, ctx, u);
    ok(ctx, clientUser(u, { owner: true }), 'Login successful!');
  });

  // Cookie-only on purpose: it can only end the caller's own session (the console also sends it
  // after forgetting the user id). Ends the session on the server, not just the cookie.
  router.get('/api/user/logout', async (ctx) => {
    await endSession(app, ctx);
    ok(ctx, null, '');
  });

  /** Ends every session of the caller, on every node, this one included. */
  router.post('/api/user/logout_all', user, async (ctx) => {
    await endUserSessions(app, currentUser(ctx).id);
    ctx.session = null;
    ok(ctx, null, '已退出所有设备的登录');
  });

  router.post('/api/user/register', bot, async (ctx) => {
    const input = parse(registerBody, body(ctx));
    await registerAccount(app, input);
    ok(ctx, null, 'Registration successful!');
  });

  router.post('/api/user/reset', async (ctx) => {
    const input = parse(z.object({ email: str(128).optional().default(''), token: str(128).optional().default('') }), body(ctx));
    const password = await resetPassword(app, input.email, input.token);
    ok(ctx, password, '密码已重置，新密码已显示');
  });

  /* ---------------------------------------------------------------- self */
  router.get('/api/user/self', user, async (ctx) => {
    const fresh = await findUserByIdWithDeleted(app.knex, currentUser(ctx).id);
    ok(ctx, clientUser(fresh!, { owner: true }));
  });

  router.put('/api/user/self', user, async (ctx) => {
    const input = parse(selfBody, body(ctx));
    const r = await updateSelf(app, currentUser(ctx), input);
    // Every session ended in updateSelf; a cookie caller goes on under a fresh session id (an
    // access-token caller gets no cookie).
    if (r.passwordChanged && sessionId(ctx)) await startSession(app, ctx, currentUser(ctx));
    ok(ctx, null, r.passwordChanged ? 'Password changed successfully!' : '更新成功');
  });

  router.delete('/api/user/self', user, async (ctx) => {
    await deleteSelf(app, currentUser(ctx));
    ctx.session = null;
    ok(ctx, null, 'Account deleted!');
  });

  router.get('/api/user/token', user, async (ctx) => {
    ok(ctx, await regenerateAccessToken(app, currentUser(ctx).id));
  });

  router.get('/api/user/aff', user, async (ctx) => {
    ok(ctx, await ensureAffCode(app, currentUser(ctx)));
  });

  router.post('/api/user/aff_transfer', user, async (ctx) => {
    const input = parse(z.object({ quota: intLike }), body(ctx));
    await transferAffQuota(app, currentUser(ctx), input.quota);
    ok(ctx, null, '划转成功');
  });

  router.put('/api/user/setting', user, async (ctx) => {
    const input = parse(settingBody, body(ctx));
    const setting = await updateSetting(app, currentUser(ctx), input);
    ok(ctx, setting, 'Notification settings updated');
  });

  router.get('/api/user/self/groups', user, async (ctx) => {
    const me = currentUser(ctx);
    const usable = app.options.json<Record<string, string>>('UserUsableGroups', {});
    const ratios = app.options.json<Record<string, number>>('GroupRatio', {});
    const out: Record<string, { desc: string; ratio: number }> = {};
    for (const [group, desc] of Object.entries(usable)) out[group] = { desc: String(desc), ratio: ratios[group] ?? 1 };
    if (!out[me.group]) out[me.group] = { desc: '用户分组', ratio: ratios[me.group] ?? 1 };
    ok(ctx, out);
  });

  router.get('/api/user/models', user, async (ctx) => {
    const rows: Array<{ model: string }> = await app
      .knex('abilities')
      .distinct('model')
      .where({ group: currentUser(ctx).group, enabled: true })
      .orderBy('model');
    ok(ctx, rows.map((r) => r.model));
  });

  /* ---------------------------------------------------------------- administration */
  router.get('/api/user/', admin, async (ctx) => {
    const paging = parsePaging(ctx.query);
    const { items, total } = await queryUsers(app.knex, { offset: (paging.p - 1) * paging.page_size, limit: paging.page_size });
    ok(ctx, { items: items.map((u) => clientUser(u)), total, page: paging.p, page_size: paging.page_size });
  });

  router.get('/api/user/search', admin, async (ctx) => {
    const paging = parsePaging(ctx.query);
    const q = parse(z.object({ keyword: qStr(), group: qStr() }), ctx.query);
    const { items, total } = await queryUsers(app.knex, {
      keyword: q.keyword,
      group: q.group,
      offset: (paging.p - 1) * paging.page_size,
      limit: paging.page_size,
    });
    ok(ctx, { items: items.map((u) => clientUser(u)), total, page: paging.p, page_size: paging.page_size });
  });

  router.post('/api/user/manage', admin, async (ctx) => {
    const input = parse(manageBody, body(ctx));
    ok(ctx, await manageUser(app, currentUser(ctx), input.id, input.action), 'Operation completed successfully!');
  });

  router.post('/api/user/', admin, async (ctx) => {
    const input = parse(createBody, body(ctx));
    const created = await adminCreateUser(app, currentUser(ctx), input);
    ok(ctx, clientUser(created), 'User account created successfully!');
  });

  router.put('/api/user/', admin, async (ctx) => {
    const input = parse(updateBody, body(ctx));
    const updated = await adminUpdateUser(app, currentUser(ctx), input);
    // Root setting its own password here keeps its session, like a self password change.
    if (input.password && updated.id === currentUser(ctx).id && sessionId(ctx)) await startSession(app, ctx, updated);
    ok(ctx, clientUser(updated), '更新成功');
  });

  router.get('/api/user/:id', async (ctx, next) => {
    // Only numeric ids: other /api/user/<word> routes belong to other areas.
    if (!/^\d{1,10}$/.test(ctx.params.id ?? '')) return next();
    await admin(ctx, async () => {
      const target = await findUserByIdWithDeleted(app.knex, Number(ctx.params.id));
      if (!target) throw new BadRequestError('用户不存在');
      const me = currentUser(ctx);
      if (Number(target.role) >= Number(me.role) && target.id !== me.id) throw new BadRequestError('无权获取同级或更高等级用户的信息');
      ok(ctx, clientUser(target));
    });
  });
}
