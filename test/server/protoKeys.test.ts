/**
 * Issue 40 item 9: group, model and other names someone types were looked up in plain objects with
 * `in` or `map[name]`, so the names every object already has (`__proto__`, `constructor`,
 * `toString`, `hasOwnProperty`) passed checks or found inherited functions: a token with group
 * `constructor` was accepted by the console (the relay then refused it), a model named `toString`
 * crashed the channel test and Claude's count_tokens, pricing lost fields. Each place now looks
 * names up among own properties only (server/src/lib/own.ts).
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import { ALL_TARGETS, describeEach, makeUser, setupRoot, type TestApp } from '../helpers/app';
import { listen, seedChannel, seedToken, setOptions, setUser } from '../mock-upstream/seed';
import { emptyMap, hasOwn, isPrototypeName, own } from '../../server/src/lib/own';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'] as const;

async function as(app: TestApp, id: number) {
  const token = crypto.randomBytes(16).toString('hex');
  await app.knex('users').where({ id }).update({ access_token: token });
  const wrap = (m: 'get' | 'post' | 'put' | 'delete') => (url: string) =>
    app.http()[m](url).set('Authorization', token).set('New-Api-User', String(id)).set('Accept-Language', 'zh');
  return { id, get: wrap('get'), post: wrap('post'), put: wrap('put'), del: wrap('delete') };
}
type Client = Awaited<ReturnType<typeof as>>;

/** A JSON answer's own member (a parsed `__proto__` key is an own property; an inherited one is not). */
const ownMember = (o: unknown, k: string): unknown => (o && typeof o === 'object' && Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined);

/** An upstream that speaks OpenAI chat, Claude messages and count_tokens, recording the model of each request. */
async function upstream() {
  const seen: Array<{ path: string; model: unknown }> = [];
  const server = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      let model: unknown;
      try {
        model = (JSON.parse(raw || '{}') as { model?: unknown }).model;
      } catch {
        model = undefined;
      }
      seen.push({ path: String(req.url), model });
      res.setHeader('content-type', 'application/json');
      if (String(req.url).includes('count_tokens')) return res.end(JSON.stringify({ input_tokens: 7 }));
      if (String(req.url).startsWith('/v1/messages'))
        return res.end(
          JSON.stringify({
            id: 'msg_x',
            type: 'message',
            role: 'assistant',
            model,
            content: [{ type: 'text', text: 'hi' }],
            stop_reason: 'end_turn',
            usage: { input_tokens: 1, output_tokens: 1 },
          }),
        );
      res.end(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  return { ...server, seen };
}

describe('own-property lookups', () => {
  it('never answer inherited members', () => {
    const parsed = JSON.parse('{"a": 1, "__proto__": 2}') as Record<string, number>;
    for (const n of NAMES.filter((x) => x !== '__proto__')) {
      expect(own(parsed, n)).toBeUndefined();
      expect(hasOwn(parsed, n)).toBe(false);
    }
    expect(own(parsed, '__proto__')).toBe(2); // JSON.parse makes it an own key: an ordinary name then
    expect(own(parsed, 'a')).toBe(1);
    expect(own(undefined, 'a')).toBeUndefined();
    for (const n of [...NAMES, 'valueOf', 'isPrototypeOf']) expect(isPrototypeName(n)).toBe(true);
    for (const n of ['default', 'vip', 'proto', '']) expect(isPrototypeName(n)).toBe(false);
    const m = emptyMap<number>();
    m.__proto__ = 3;
    expect(Object.keys(m)).toEqual(['__proto__']);
    expect(JSON.parse(JSON.stringify(m))).toEqual(JSON.parse('{"__proto__": 3}'));
  });
});

describeEach(ALL_TARGETS, 'prototype names as groups and models (issue 40 item 9)', (getApp) => {
  let root: Client;
  let alice: Client;

  beforeAll(async () => {
    const app = getApp();
    root = await as(app, (await setupRoot(app)).id);
    alice = await as(app, (await makeUser(app, { group: 'default' })).id);
  });

  it('token create and update refuse them as groups; nothing is written', async () => {
    const app = getApp();
    const count = async () => Number((await app.knex('tokens').count({ n: '*' }).first())?.n ?? 0);
    const n = await count();
    const t = (await alice.post('/api/token/').send({ name: 'grp', unlimited_quota: true })).body.data as { id: number };
    for (const group of NAMES) {
      const created = await alice.post('/api/token/').send({ name: 'proto', group, unlimited_quota: true });
      expect([group, created.body.success, created.body.message]).toEqual([group, false, `无权使用分组 ${group}`]);
      const updated = await alice.put('/api/token/').send({ id: t.id, group });
      expect([group, updated.body.success, updated.body.message]).toEqual([group, false, `无权使用分组 ${group}`]);
    }
    expect(await count()).toBe(n + 1);
    expect((await app.knex('tokens').where({ id: t.id }).first()).group).toBe('');
    // A real usable group still works.
    expect((await alice.put('/api/token/').send({ id: t.id, group: 'default' })).body.success).toBe(true);
  });

  it('an admin cannot give a user such a group', async () => {
    const app = getApp();
    for (const group of NAMES) {
      const res = await root.put('/api/user/').send({ id: alice.id, group });
      expect([group, res.body]).toEqual([group, expect.objectContaining({ success: false, message: '无效的分组名称' })]);
    }
    expect((await app.knex('users').where({ id: alice.id }).first()).group).toBe('default');
  });

  it('a user whose group has such a name (set in the database) sees it as their own group: groups, pricing, top-up price', async () => {
    const app = getApp();
    await setOptions(app, { GroupRatio: JSON.stringify({ default: 1, vip: 2 }), UserUsableGroups: JSON.stringify({ default: '默认', vip: 'VIP' }) });
    for (const group of NAMES) {
      const bob = await as(app, (await makeUser(app)).id);
      await setUser(app, bob.id, { group });
      const groups = (await bob.get('/api/user/self/groups')).body.data as unknown;
      expect([group, ownMember(groups, group)]).toEqual([group, { desc: '用户分组', ratio: 1 }]);
      expect(ownMember(groups, 'vip')).toEqual({ desc: 'VIP', ratio: 2 });
      const pricing = (await bob.get('/api/pricing')).body as { usable_group: unknown; group_ratio: unknown };
      expect([group, ownMember(pricing.usable_group, group)]).toEqual([group, '用户分组']);
      expect(Object.keys(pricing.group_ratio as object).sort()).toEqual(['default', 'vip']);
      const price = await bob.post('/api/user/amount').send({ amount: 10 });
      expect([group, price.body.success, price.body.data]).toEqual([group, true, expect.stringMatching(/^\d+\.\d\d$/)]);
    }
  });

  it('pricing treats model names like constructor or toString as unpriced models with every field', async () => {
    const app = getApp();
    const up = await upstream();
    let onDone = async (): Promise<unknown> => undefined;
    try {
      const id = await seedChannel(app, { name: 'proto-models', base_url: up.url, models: 'constructor,toString,hasOwnProperty,valueOf', group: 'default' });
      onDone = () => root.del(`/api/channel/${id}`);
      const data = (await alice.get('/api/pricing')).body.data as Array<Record<string, unknown>>;
      for (const model of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
        expect(data.find((e) => e.model_name === model)).toEqual({
          model_name: model,
          quota_type: 0,
          model_ratio: 0,
          completion_ratio: 1,
          model_price: 0,
          enable_groups: ['default'],
          priced: false,
          callable: false,
        });
      }
    } finally {
      await onDone();
      await up.close();
    }
  });

  it('a payment method named like a prototype member is refused, not signed', async () => {
    const app = getApp();
    await setOptions(app, { PayAddress: 'https://pay.example.com', EpayId: '1001', EpayKey: 'k', ServerAddress: 'https://gw.example.com' });
    try {
      for (const method of NAMES) {
        const res = await alice.post('/api/user/pay').send({ amount: 10, payment_method: method });
        expect([method, res.body.success, res.body.message]).toEqual([method, false, expect.any(String)]);
        expect(res.body.url).toBeUndefined();
      }
      expect(Number((await app.knex('top_ups').where({ user_id: alice.id }).count({ n: '*' }).first())?.n ?? 0)).toBe(0);
      expect((await alice.post('/api/user/pay').send({ amount: 10, payment_method: 'zfb' })).body.success).toBe(true);
    } finally {
      await setOptions(app, { PayAddress: '', EpayId: '', EpayKey: '', ServerAddress: '' });
    }
  });

  it('model mappings: a model named like a prototype member is not mapped (relay, channel test, Claude count_tokens)', async () => {
    const app = getApp();
    const up = await upstream();
    try {
      await setOptions(app, { ModelRatio: JSON.stringify({ toString: 1, constructor: 1, 'gpt-4o': 1 }) });
      const mapping = JSON.stringify({ 'gpt-4o': 'mapped-4o' });
      const openai = await seedChannel(app, {
        name: 'proto-openai',
        base_url: up.url,
        models: 'toString,constructor,gpt-4o',
        group: 'default',
        model_mapping: mapping,
      });
      await seedChannel(app, {
        name: 'proto-claude',
        type: 14,
        key: 'sk-ant-x',
        base_url: up.url,
        models: 'toString,constructor',
        group: 'default',
        model_mapping: mapping,
      });
      const token = await seedToken(app, alice.id, { unlimited_quota: true });
      await setUser(app, alice.id, { quota: 100_000_000 });

      for (const model of ['toString', 'constructor']) {
        up.seen.length = 0;
        // The channel test (root) with that model: the upstream gets the name as is.
        const tested = await root.get(`/api/channel/test/${openai}?model=${model}`);
        expect([model, tested.status, tested.body.success]).toEqual([model, 200, true]);
        expect(up.seen).toEqual([{ path: '/v1/chat/completions', model }]);

        up.seen.length = 0;
        const counted = await app
          .http()
          .post('/v1/messages/count_tokens')
          .set('x-api-key', token.key)
          .set('anthropic-version', '2023-06-01')
          .send({ model, messages: [{ role: 'user', content: 'hi' }] });
        expect([model, counted.status, counted.body]).toEqual([model, 200, { input_tokens: 7 }]);
        expect(up.seen).toEqual([{ path: '/v1/messages/count_tokens', model }]);

        up.seen.length = 0;
        const chat = await app
          .http()
          .post('/v1/chat/completions')
          .set('Authorization', `Bearer ${token.key}`)
          .send({ model, messages: [{ role: 'user', content: 'hi' }] });
        // Either channel may take it (same priority): each gets the name as is.
        expect([model, chat.status]).toEqual([model, 200]);
        expect(up.seen.map((s) => s.model)).toEqual([model]);
      }
      // The real mapping still applies.
      up.seen.length = 0;
      await root.get(`/api/channel/test/${openai}?model=gpt-4o`);
      expect(up.seen).toEqual([{ path: '/v1/chat/completions', model: 'mapped-4o' }]);
    } finally {
      await up.close();
    }
  });
});
