/** Test seeding for relay tests: channels (rows + abilities), tokens, a listening gateway. */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { syncAbilities, type ChannelRow } from '../../server/src/repositories/channels';
import { invalidateChannels, invalidateToken, invalidateUser } from '../../server/src/services/invalidate';
import type { AppContext } from '../../server/src/context';
import { usageBatcher } from '../../server/src/ledger/usage';

export interface SeedChannel {
  name?: string;
  type?: number;
  key?: string;
  base_url: string;
  models: string;
  group?: string;
  priority?: number;
  weight?: number;
  status?: number;
  model_mapping?: string;
  status_code_mapping?: string;
  param_override?: string;
  auto_ban?: number;
  other?: string;
  openai_organization?: string;
  test_model?: string;
  max_input_tokens?: number;
  setting?: string;
}

export async function seedChannel(app: { knex: Knex; ctx: AppContext }, c: SeedChannel): Promise<number> {
  const row = {
    name: c.name ?? `ch-${crypto.randomBytes(3).toString('hex')}`,
    type: c.type ?? 1,
    key: c.key ?? 'sk-upstream-key',
    base_url: c.base_url,
    models: c.models,
    group: c.group ?? 'default',
    priority: c.priority ?? 0,
    weight: c.weight ?? 0,
    status: c.status ?? 1,
    model_mapping: c.model_mapping ?? '',
    status_code_mapping: c.status_code_mapping ?? '',
    param_override: c.param_override ?? '',
    auto_ban: c.auto_ban ?? 1,
    other: c.other ?? '',
    openai_organization: c.openai_organization ?? '',
    test_model: c.test_model ?? '',
    max_input_tokens: c.max_input_tokens ?? 0,
    setting: c.setting ?? '',
    created_time: Math.floor(Date.now() / 1000),
  };
  const id = await app.knex.transaction(async (trx) => {
    const [ins] = await trx('channels').insert(row).returning('id');
    const id = Number(typeof ins === 'object' ? (ins as { id: number }).id : ins);
    await syncAbilities(trx, { ...(row as unknown as ChannelRow), id });
    return id;
  });
  await invalidateChannels(app.ctx);
  return id;
}

export async function updateChannel(app: { knex: Knex; ctx: AppContext }, id: number, patch: Partial<ChannelRow>): Promise<void> {
  await app.knex.transaction(async (trx) => {
    await trx('channels').where({ id }).update(patch);
    const row = await trx('channels').where({ id }).first();
    await syncAbilities(trx, row);
  });
  await invalidateChannels(app.ctx);
}

export interface SeedToken {
  remain_quota?: number;
  unlimited_quota?: boolean;
  expired_time?: number;
  status?: number;
  model_limits?: string;
  allow_ips?: string;
  group?: string;
  name?: string;
}

/** Inserts a token; returns its id and the key as clients send it (`sk-…`). */
export async function seedToken(app: { knex: Knex; ctx: AppContext }, userId: number, t: SeedToken = {}): Promise<{ id: number; key: string; raw: string }> {
  const raw = crypto
    .randomBytes(36)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x')
    .slice(0, 48);
  const [ins] = await app
    .knex('tokens')
    .insert({
      user_id: userId,
      key: raw,
      name: t.name ?? 'test-token',
      status: t.status ?? 1,
      created_time: Math.floor(Date.now() / 1000),
      expired_time: t.expired_time ?? -1,
      remain_quota: t.remain_quota ?? 0,
      unlimited_quota: t.unlimited_quota ?? true,
      model_limits_enabled: !!t.model_limits,
      model_limits: t.model_limits ?? '',
      allow_ips: t.allow_ips ?? '',
      group: t.group ?? '',
    })
    .returning('id');
  const id = Number(typeof ins === 'object' ? (ins as { id: number }).id : ins);
  await invalidateToken(app.ctx, raw);
  return { id, key: `sk-${raw}`, raw };
}

export async function setUser(app: { knex: Knex; ctx: AppContext }, id: number, patch: Record<string, unknown>): Promise<void> {
  await app.knex('users').where({ id }).update(patch);
  await invalidateUser(app.ctx, id);
}

/** Listens on an ephemeral port; returns the base URL and a closer. */
export async function listen(callback: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(callback);
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Writes queued logs and counters now. */
export const flushUsage = (app: { ctx: AppContext }) => usageBatcher(app.ctx).flush();

/** Sets options directly (bypassing the API) and reloads them. */
export async function setOptions(app: { knex: Knex; ctx: AppContext }, values: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(values)) await app.knex('options').insert({ key, value }).onConflict('key').merge();
  await app.ctx.options.afterWrite();
}
