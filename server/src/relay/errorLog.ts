import type { RelayCall } from './call/relayCall';
import type { RelayOutcome } from './call/outcome';
import { scrubSecrets } from './errors';
import { usageBatcher } from '../ledger/usage';
import { LOG_TYPE } from '../repositories/logs';
import { nowSec } from '../lib/time';
import { loadedRouteTable } from '../channels/routeTable';
import { localize, serverLang } from '../i18n';

/**
 * The error log (type 5, as new-api's): one row per failed relay call — after its retries, not per
 * attempt — with the model, the last channel tried, the status the client got and the message,
 * keys and secrets scrubbed. Written through the usage batcher like the consume log, so the
 * failing call waits for nothing; `ErrorLogEnabled` (default on) switches it off. Runs only on the
 * failure path: the success path pays nothing for it.
 */
export function recordFailure(call: RelayCall, outcome: RelayOutcome): void {
  try {
    const { app, principal } = call;
    if (!app.options.bool('ErrorLogEnabled')) return;
    const channelId = outcome.channelId || outcome.channels[outcome.channels.length - 1] || 0;
    const channel = channelId ? loadedRouteTable(app)?.channels.get(channelId) : undefined;
    const err = outcome.error as { message?: unknown; code?: unknown } | undefined;
    // Stored text: our own wording in the server's language (docs/i18n.md), else the error's text.
    const raw =
      outcome.error instanceof Error ? localize(outcome.error, serverLang(app)) : typeof err?.message === 'string' ? err.message : String(outcome.error);
    const message = scrubSecrets(raw, channel?.keys ?? []).slice(0, 2000);
    const other: Record<string, unknown> = {
      status_code: outcome.status,
      error_code: typeof err?.code === 'string' ? err.code : '',
      request_format: call.inbound.name,
      admin_info: { use_channel: outcome.channels },
    };
    const row = {
      user_id: principal.user.id,
      created_at: nowSec(),
      type: LOG_TYPE.error,
      username: principal.user.username,
      token_name: principal.tokenName,
      token_id: principal.token?.id ?? 0,
      model_name: call.model,
      quota: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      use_time: Math.floor(call.timer.totalMs() / 1000),
      is_stream: call.stream,
      channel_id: channelId,
      channel_name: channel?.info.name ?? '',
      group: principal.group,
      ip: call.ip,
      content: message,
      other: JSON.stringify(other),
    };
    if (!channelId || channel) {
      usageBatcher(app).addRow(row);
      return;
    }
    // The route table was rebuilt meanwhile (an auto-disable drops it): the name from the row.
    void app
      .knex('channels')
      .where({ id: channelId })
      .first('name')
      .then((r: { name?: string } | undefined) => usageBatcher(app).addRow({ ...row, channel_name: String(r?.name ?? '') }))
      .catch((e: unknown) => app.log.warn({ err: e }, 'error log row failed'));
  } catch (e) {
    call.app.log.warn({ err: e }, 'error log row failed');
  }
}
