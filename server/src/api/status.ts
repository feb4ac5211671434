import type Router from '@koa/router';
import { z } from 'zod';
import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { parse } from '../lib/validate';
import { nowSec } from '../lib/time';
import { createAccount } from '../services/accounts';
import { ROLE } from '../repositories/users';

export async function isSetupDone(app: AppContext): Promise<boolean> {
  return app.memo('setupDone', () => ({ done: false })).done || (await refreshSetup(app));
}

async function refreshSetup(app: AppContext): Promise<boolean> {
  const row = await app.knex('setups').first('id');
  const done = Boolean(row);
  app.memo('setupDone', () => ({ done: false })).done = done;
  return done;
}

/** The public status object (spec 000 §1), answered before setup too. */
export async function statusObject(app: AppContext): Promise<Record<string, unknown>> {
  const o = app.options;
  return {
    version: app.config.version,
    start_time: app.startTime,
    system_name: o.get('SystemName'),
    logo: o.get('Logo'),
    footer_html: o.get('Footer'),
    quota_per_unit: o.quotaPerUnit,
    display_in_currency: o.bool('DisplayInCurrencyEnabled'),
    enable_drawing: o.bool('DrawingEnabled'),
    enable_task: o.bool('TaskEnabled'),
    enable_data_export: o.bool('DataExportEnabled'),
    data_export_default_time: o.get('DataExportDefaultTime'),
    default_collapse_sidebar: o.bool('DefaultCollapseSidebar'),
    mj_notify_enabled: o.bool('MjNotifyEnabled'),
    chats: o.json<unknown[]>('Chats', []),
    chat_link: o.get('ChatLink'),
    chat_link2: o.get('ChatLink2'),
    docs_link: o.get('general_setting.docs_link'),
    top_up_link: o.get('TopUpLink'),
    server_address: o.get('ServerAddress'),
    price: o.num('Price', 7.3),
    min_topup: o.num('MinTopUp', 1),
    enable_online_topup: Boolean(o.get('PayAddress') && o.get('EpayId') && o.get('EpayKey')),
    display_token_stat: o.bool('DisplayTokenStatEnabled'),
    email_verification: o.bool('EmailVerificationEnabled'),
    password_login_enabled: o.bool('PasswordLoginEnabled'),
    password_register_enabled: o.bool('PasswordRegisterEnabled'),
    register_enabled: o.bool('RegisterEnabled'),
    turnstile_check: o.bool('TurnstileCheckEnabled'),
    turnstile_site_key: o.get('TurnstileSiteKey'),
    github_oauth: o.bool('GitHubOAuthEnabled'),
    github_client_id: o.get('GitHubClientId'),
    oidc_enabled: o.bool('oidc.enabled'),
    oidc_client_id: o.get('oidc.client_id'),
    oidc_authorization_endpoint: o.get('oidc.authorization_endpoint'),
    wechat_login: o.bool('WeChatAuthEnabled'),
    wechat_qrcode: o.get('WeChatAccountQRCodeImageURL'),
    telegram_oauth: o.bool('TelegramOAuthEnabled'),
    telegram_bot_name: o.get('TelegramBotName'),
    linuxdo_oauth: o.bool('LinuxDOOAuthEnabled'),
    linuxdo_client_id: o.get('LinuxDOClientId'),
    self_use_mode_enabled: o.bool('SelfUseModeEnabled'),
    demo_site_enabled: o.bool('DemoSiteEnabled'),
    setup: await isSetupDone(app),
  };
}

const setupBody = z.object({
  username: z.string().trim().min(1, '请输入管理员用户名').max(12, '用户名长度不能超过 12 个字符'),
  password: z.string().min(8, '密码长度至少为8个字符').max(20, '密码长度不能超过 20 个字符'),
  confirmPassword: z.string(),
  SelfUseModeEnabled: z.boolean().optional().default(false),
  DemoSiteEnabled: z.boolean().optional().default(false),
});

export function register(router: Router, app: AppContext): void {
  router.get('/api/status', async (ctx) => {
    ctx.body = { success: true, message: '', data: await statusObject(app) };
  });

  router.get('/api/notice', async (ctx) => {
    ctx.body = { success: true, message: '', data: app.options.get('Notice') };
  });
  router.get('/api/about', async (ctx) => {
    ctx.body = { success: true, message: '', data: app.options.get('About') };
  });
  router.get('/api/home_page_content', async (ctx) => {
    ctx.body = { success: true, message: '', data: app.options.get('HomePageContent') };
  });

  router.get('/api/setup', async (ctx) => {
    const done = await isSetupDone(app);
    const root = await app.knex('users').where({ role: ROLE.root }).first('id');
    ctx.body = { success: true, message: '', data: { status: done, root_init: Boolean(root), database_type: app.db.kind } };
  });

  router.post('/api/setup', async (ctx) => {
    if (await refreshSetup(app)) throw new BadRequestError('系统已经初始化完成');
    const rootExists = Boolean(await app.knex('users').where({ role: ROLE.root }).first('id'));
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const modes = parse(setupBody.pick({ SelfUseModeEnabled: true, DemoSiteEnabled: true }), body);
    if (modes.SelfUseModeEnabled && modes.DemoSiteEnabled) throw new BadRequestError('不能同时启用自用模式和演示站点模式');
    await app.knex.transaction(async (trx) => {
      // The fixed id makes a concurrent second setup fail on the primary key.
      await trx('setups').insert({ id: 1, version: app.config.version, initialized_at: nowSec() });
      if (!rootExists) {
        const input = parse(setupBody, body);
        if (input.password !== input.confirmPassword) throw new BadRequestError('两次输入的密码不一致');
        await createAccount(app, { username: input.username, password: input.password, role: ROLE.root, display_name: 'Root User' }, trx);
      }
      for (const [key, value] of Object.entries({ SelfUseModeEnabled: modes.SelfUseModeEnabled, DemoSiteEnabled: modes.DemoSiteEnabled })) {
        await trx('options').insert({ key, value: String(value) }).onConflict('key').merge();
      }
    }).catch((err: unknown) => {
      if (err instanceof BadRequestError) throw err;
      if (/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw new BadRequestError('系统已经初始化完成');
      throw err;
    });
    await app.options.afterWrite();
    await refreshSetup(app);
    ctx.body = { success: true, message: '系统初始化完成', data: null };
  });
}
