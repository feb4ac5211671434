import type { AppContext } from '../context';
import { localize, serverLang, t } from '../i18n';
import { changeChannelKeys, changeChannelStatus } from '../repositories/channels';
import { keyStatus, setKeyStatus } from '../repositories/channelInfo';
import type { ChannelEntry } from './routeTable';
import { channelKeys } from './routeTable';
import { invalidateChannels } from '../services/invalidate';
import { nowSec } from '../lib/time';
import type { UpstreamError } from '../relay/errors';
import { sendMail } from '../services/mail';
import { notifyAdminTelegram } from '../services/notify';
import { rootEmail } from '../repositories/users';
import { CHANNEL_STATUS, KEY_STATUS } from '../repositories/channelStatus';

/**
 * Tells the root user (by email, when SMTP is set up) and the admins' Telegram chat (when
 * TelegramAdminChatId and the bot token are set) that a channel changed state. Background.
 */
function notifyRoot(app: AppContext, subject: string, content: string): void {
  void notifyAdminTelegram(app, `${subject}\n${content}`).catch((err: unknown) => app.log.warn({ err: String(err) }, 'channel notice telegram failed'));
  void (async () => {
    if (!app.options.get('SMTPServer').trim()) return;
    const email = await rootEmail(app.knex);
    if (!email) return;
    await sendMail(app, email, subject, `<p>${content.replace(/[<>&]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]!)}</p>`);
  })().catch((err: unknown) => app.log.warn({ err }, 'channel notice mail failed'));
}

/** AutomaticDisableKeywords, one per line, matched case-insensitively. */
export function matchesDisableKeyword(app: AppContext, text: string): boolean {
  if (!text) return false;
  const lower = text.toLowerCase();
  return app.options
    .get('AutomaticDisableKeywords')
    .split('\n')
    .map((k) => k.trim().toLowerCase())
    .some((k) => k && lower.includes(k));
}

/** Error codes of a key that will not heal by itself (OpenAI's and the compatible upstreams'): invalid, deactivated, no quota left. */
const DEAD_KEY_CODES = /"(code|type)"\s*:\s*"(invalid_api_key|account_deactivated|billing_not_active|insufficient_quota|access_terminated)"/;

/**
 * Should this failure auto-disable the channel or key (option on, channel.auto_ban; 401, an
 * error code of a dead key or an exhausted quota, or a keyword)? Failures that heal by themselves
 * (5xx, timeouts, 429 rate limits) are the breakers' business, never a permanent disable.
 */
export function shouldAutoDisable(app: AppContext, autoBan: boolean, err: UpstreamError): boolean {
  if (!autoBan || !app.options.bool('AutomaticDisableChannelEnabled')) return false;
  return err.status === 401 || DEAD_KEY_CODES.test(err.body) || matchesDisableKeyword(app, `${err.message}\n${err.body}`);
}

/** Sets status (and abilities) if the channel is in one of `from`; the channel's name when it changed. */
async function setStatus(app: AppContext, id: number, from: number[], to: number, reason?: string): Promise<string | false> {
  const changed = await changeChannelStatus(app.knex, id, from, to, nowSec(), reason);
  if (changed !== false) await invalidateChannels(app);
  return changed;
}

export async function autoDisableChannel(app: AppContext, id: number, reason: string): Promise<boolean> {
  const name = await setStatus(app, id, [CHANNEL_STATUS.enabled], CHANNEL_STATUS.autoDisabled, reason.slice(0, 500));
  if (name === false) return false;
  app.log.warn({ channel: id, reason }, 'channel auto-disabled');
  const lang = serverLang(app);
  notifyRoot(app, t(lang, 'notify.channel_disabled_title', { name, id }), t(lang, 'notify.channel_disabled_body', { name, id, reason }));
  return true;
}

/** Re-enables an auto-disabled (status 3) channel; manual disables are left alone. */
export async function autoEnableChannel(app: AppContext, id: number): Promise<boolean> {
  const name = await setStatus(app, id, [CHANNEL_STATUS.autoDisabled], CHANNEL_STATUS.enabled, '');
  if (name === false) return false;
  app.log.info({ channel: id }, 'channel auto-enabled');
  const lang = serverLang(app);
  notifyRoot(app, t(lang, 'notify.channel_enabled_title', { name, id }), t(lang, 'notify.channel_enabled_body', { name, id }));
  return true;
}

/**
 * Sets one key's status (auto: 3, only from enabled; admin: any). A channel left without an enabled
 * key is auto-disabled; one that was, gets enabled again with its first enabled key. True if it changed.
 */
export async function setChannelKeyStatus(app: AppContext, id: number, index: number, status: number, reason: string, auto: boolean): Promise<boolean> {
  const saved = await changeChannelKeys(
    app.knex,
    id,
    (row, info) => {
      const keys = channelKeys(Number(row.type), String(row.key ?? ''));
      if (keys.length < 2 || index < 0 || index >= keys.length) return false;
      info.is_multi_key = true;
      const cur = keyStatus(info, index);
      if (cur === status || (auto && cur !== KEY_STATUS.enabled && status !== KEY_STATUS.enabled)) return false;
      if (auto && status === KEY_STATUS.enabled && cur !== KEY_STATUS.autoDisabled) return false;
      setKeyStatus(info, index, status, reason, nowSec());
      info.multi_key_size = keys.length;
      const enabled = keys.filter((_, i) => keyStatus(info, i) === KEY_STATUS.enabled).length;
      return { key: String(row.key), info, keys: keys.length, enabled };
    },
    nowSec(),
    t(serverLang(app), 'channel.all_keys_disabled'),
  );
  if (!saved) return false;
  await invalidateChannels(app);
  return true;
}

export async function autoDisableKey(app: AppContext, id: number, index: number, reason: string): Promise<boolean> {
  const changed = await setChannelKeyStatus(app, id, index, KEY_STATUS.autoDisabled, reason, true);
  if (changed) {
    app.log.warn({ channel: id, key: index, reason }, 'channel key auto-disabled');
    const lang = serverLang(app);
    notifyRoot(app, t(lang, 'notify.key_disabled_title', { id, index }), t(lang, 'notify.key_disabled_body', { id, index, reason }));
  }
  return changed;
}

/** Called after an upstream failure on the relay path; never throws. A multi-key channel loses the key, not the channel. */
export function onUpstreamFailure(app: AppContext, ch: ChannelEntry, keyIndex: number, err: UpstreamError): void {
  if (!shouldAutoDisable(app, ch.autoBan, err)) return;
  const reason = disableReason(app, err);
  const done = ch.multiKey && keyIndex >= 0 ? autoDisableKey(app, ch.info.id, keyIndex, reason) : autoDisableChannel(app, ch.info.id, reason);
  void done.catch((e: unknown) => app.log.error({ err: e }, 'auto-disable failed'));
}

/** Why a failure disabled a channel or key, stored and mailed in the server's language. */
export function disableReason(app: AppContext, err: UpstreamError): string {
  const lang = serverLang(app);
  const text = localize(err, lang);
  return err.status ? t(lang, 'health.status_reason', { status: err.status, reason: text }) : text;
}
