import type { AppContext } from '../context';
import { serverLang, t } from '../i18n';
import type { UserRecord } from '../relay/auth';
import { sendMail } from './mail';
import { fetchPolicy, guardedFetch } from '../lib/guardedFetch';

/**
 * Quota warning: when a call takes the user's balance from at/above the threshold to below it,
 * tell the user once (email, or webhook when the user chose one). Runs in the background; a
 * 10-minute KV marker keeps concurrent calls from notifying twice.
 */
export function maybeWarnQuota(app: AppContext, user: UserRecord, before: number, after: number): void {
  const raw = user.setting.quota_warning_threshold;
  const threshold = typeof raw === 'number' && Number.isFinite(raw) ? raw : app.options.num('QuotaRemindThreshold', 0);
  if (!(threshold > 0 && before >= threshold && after < threshold)) return;
  void notifyQuota(app, user, after, threshold).catch((err: unknown) => app.log.warn({ err, user: user.id }, 'quota warning failed'));
}

/** Exported for tests: the warning itself (rejects when the webhook is refused or fails). */
export async function notifyQuota(app: AppContext, user: UserRecord, remaining: number, threshold: number): Promise<void> {
  if (!(await app.kv.setNX(`quota_warn:${user.id}`, '1', 600))) return;
  const unit = app.options.quotaPerUnit;
  // The user's language is not known here: the server's own (docs/i18n.md).
  const lang = serverLang(app);
  const title = t(lang, 'notify.quota_title');
  const content = t(lang, 'notify.quota_content', {
    threshold,
    thresholdUsd: (threshold / unit).toFixed(2),
    remaining,
    remainingUsd: (remaining / unit).toFixed(2),
  });
  const s = user.setting;
  if (s.notify_type === 'webhook' && typeof s.webhook_url === 'string' && s.webhook_url) {
    const url = new URL(s.webhook_url);
    const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1';
    if (url.protocol !== 'https:' && !(local && url.protocol === 'http:')) throw new Error('webhook must be https');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (typeof s.webhook_secret === 'string' && s.webhook_secret) headers.authorization = `Bearer ${s.webhook_secret}`;
    // A user typed this URL: the guard (every root fetch setting) decides whether it may be reached.
    await guardedFetch(app, url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ type: 'quota_exceed', title, content, values: [remaining, threshold], timestamp: Math.floor(Date.now() / 1000) }),
      timeoutMs: 10_000,
      maxBytes: 64 * 1024,
      maxRedirects: 0,
    });
    return;
  }
  const to = (typeof s.notification_email === 'string' && s.notification_email) || user.email;
  if (!to) return;
  await sendMail(app, to, title, `<p>${content}</p>`);
}

/**
 * Sends an alert to the admins' Telegram chat (TelegramAdminChatId) through the login bot
 * (TelegramBotToken), as new-api does for channel state changes. Nothing when either is unset.
 * Root configured both, so the operator's fetch rule applies. Rejects when Telegram refuses.
 */
export async function notifyAdminTelegram(app: AppContext, text: string): Promise<boolean> {
  const chatId = app.options.get('TelegramAdminChatId').trim();
  const token = app.options.get('TelegramBotToken').trim();
  if (!chatId || !token) return false;
  const base = (app.config.telegramApiUrl ?? 'https://api.telegram.org').replace(/\/+$/, '');
  const res = await guardedFetch(app, `${base}/bot${encodeURIComponent(token)}/sendMessage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: chatId, text: text.slice(0, 4000), disable_web_page_preview: true }),
    timeoutMs: 10_000,
    maxBytes: 64 * 1024,
    maxRedirects: 0,
    policy: fetchPolicy(app, 'operator'),
  });
  // The token is part of the URL: report Telegram's status and description only.
  if (res.status >= 400) throw new Error(`telegram answered ${res.status}: ${res.text().slice(0, 200)}`);
  return true;
}
