import type { AppContext } from '../context';
import { isSetupDone } from './setup';
import { passkeysUsable } from './passkeys';

/** The public status object the console reads at start, answered before setup too. */
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
    passkey_login: passkeysUsable(app),
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
    // The console offers the update check only when a release feed is configured.
    update_check: o.get('UpdateCheckUrl').trim() !== '',
    setup: await isSetupDone(app),
  };
}
