import type { AppContext } from '../context';
import { CHANNEL_STATUS, changeChannelStatus } from '../repositories/channels';
import { invalidateChannels } from '../services/invalidate';
import { nowSec } from '../lib/time';
import type { UpstreamError } from './errors';
import { sendMail } from '../services/mail';
import { rootEmail } from '../repositories/users';

/** Tells the root user (by email, when SMTP is set up) that a channel changed state. Background. */
function notifyRoot(app: AppContext, subject: string, content: string): void {
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

/** Should this failure auto-disable the channel (option on, channel.auto_ban, 401 or keyword)? */
export function shouldAutoDisable(app: AppContext, autoBan: boolean, err: UpstreamError): boolean {
  if (!autoBan || !app.options.bool('AutomaticDisableChannelEnabled')) return false;
  return err.status === 401 || matchesDisableKeyword(app, `${err.message}\n${err.body}`);
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
  notifyRoot(app, `渠道「${name}」（#${id}）已被禁用`, `渠道「${name}」（#${id}）已被自动禁用，原因：${reason}`);
  return true;
}

/** Re-enables an auto-disabled (status 3) channel; manual disables are left alone. */
export async function autoEnableChannel(app: AppContext, id: number): Promise<boolean> {
  const name = await setStatus(app, id, [CHANNEL_STATUS.autoDisabled], CHANNEL_STATUS.enabled, '');
  if (name === false) return false;
  app.log.info({ channel: id }, 'channel auto-enabled');
  notifyRoot(app, `渠道「${name}」（#${id}）已被启用`, `渠道「${name}」（#${id}）测试通过，已被自动启用`);
  return true;
}

/** Called after an upstream failure on the relay path; never throws. */
export function onUpstreamFailure(app: AppContext, channelId: number, autoBan: boolean, err: UpstreamError): void {
  if (!shouldAutoDisable(app, autoBan, err)) return;
  void autoDisableChannel(app, channelId, `${err.status ? `状态码 ${err.status}：` : ''}${err.message}`).catch((e: unknown) =>
    app.log.error({ err: e }, 'auto-disable failed'),
  );
}
