import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import ts from 'typescript';
import { en } from '../../server/src/i18n/en';
import { zh } from '../../server/src/i18n/zh';
import { LANGS, msg, pickLanguage, statedLanguage, t, zmsg, fromZodText } from '../../server/src/i18n';
import { ALL_TARGETS, DB_TARGETS, buildApp, describeEach, makeUser, setupRoot } from '../helpers/app';
import { seedToken } from '../mock-upstream/seed';

const SERVER_SRC = path.resolve(__dirname, '../../server/src');
const HAN = /[\u3400-\u9fff\uf900-\ufaff]/;

/**
 * Files whose Chinese text is not a server message:
 * - i18n/zh.ts is the Chinese catalogue itself;
 * - channels/providers/aiproxyLibrary.ts appends the AI Proxy library's document list to the model's
 *   answer under the heading that provider's own answers use (参考文档): it is part of the
 *   answer's content, which the gateway relays, not words the gateway says to its caller.
 */
const ALLOWED = new Set(['i18n/zh.ts', 'channels/providers/aiproxyLibrary.ts']);

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('server message catalogue', () => {
  it('has the same keys in every language, none empty, with the same placeholders', () => {
    expect(Object.keys(en).sort()).toEqual(Object.keys(zh).sort());
    for (const [key, text] of Object.entries(zh)) {
      const english = (en as Record<string, string>)[key]!;
      expect([key, text.trim().length > 0, english.trim().length > 0]).toEqual([key, true, true]);
      expect([key, placeholders(english)]).toEqual([key, placeholders(text)]);
    }
  });

  it('leaves no Chinese literal in the server outside the zh catalogue', () => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith('.ts')) scan(full);
      }
    };
    const scan = (file: string) => {
      const rel = path.relative(SERVER_SRC, file).split(path.sep).join('/');
      if (ALLOWED.has(rel)) return;
      const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if (
          (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node) || ts.isRegularExpressionLiteral(node)) &&
          HAN.test(node.text)
        ) {
          const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          found.push(`${rel}:${line}: ${node.text.slice(0, 60)}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    };
    walk(SERVER_SRC);
    expect(found).toEqual([]);
  });

  it('fills placeholders, nested messages included, in the language asked', () => {
    expect(t('en', 'relay.no_channel', { group: 'vip', model: 'gpt-x' })).toBe('No channel available for model gpt-x in group vip');
    expect(t('zh', 'relay.no_channel', { group: 'vip', model: 'gpt-x' })).toBe('当前分组 vip 下对于模型 gpt-x 无可用渠道');
    const nested = msg('channel.list_too_long', { what: msg('field.models') });
    expect(t('en', nested)).toBe('Models: too long');
    expect(t('zh', nested)).toBe('模型过长');
    expect(fromZodText(zmsg('channel.list_too_long', { what: msg('field.models') }))).toEqual(nested);
    expect(fromZodText('redemption.invalid')).toEqual({ key: 'redemption.invalid' });
    expect(fromZodText('Too small: expected string to have >=1 characters')).toBeUndefined();
  });

  it('picks zh or en from Accept-Language (weights, regions), English when nothing matches', () => {
    expect(pickLanguage(undefined)).toBe('en');
    expect(pickLanguage('')).toBe('en');
    expect(pickLanguage('zh')).toBe('zh');
    expect(pickLanguage('zh-CN,zh;q=0.9')).toBe('zh');
    expect(pickLanguage('en-US,en;q=0.9')).toBe('en');
    expect(pickLanguage('en;q=0.5, zh-TW;q=0.8')).toBe('zh');
    expect(pickLanguage('zh;q=0, en')).toBe('en');
    expect(pickLanguage('fr-FR, de;q=0.8')).toBe('en');
    expect(pickLanguage('fr, zh;q=0.3')).toBe('zh');
    expect(statedLanguage('fr')).toBeUndefined();
    expect(LANGS).toEqual(['zh', 'en']);
  });
});

describeEach(ALL_TARGETS, 'answers in the caller language', (getApp) => {
  let key = '';

  beforeAll(async () => {
    const app = getApp();
    await setupRoot(app);
    const u = await makeUser(app, { quota: 1_000_000 });
    key = (await seedToken(app, u.id)).key;
  });

  it('console envelope: a wrong login in zh, in en, and in English without a header', async () => {
    const app = getApp();
    const send = (lang?: string) => {
      const r = request(app.callback).post('/api/user/login');
      return (lang ? r.set('Accept-Language', lang) : r).send({ username: 'nobody', password: 'wrongpass1' });
    };
    expect((await send('zh-CN,zh;q=0.9')).body).toMatchObject({ success: false, message: '用户名或密码错误，或用户已被封禁' });
    expect((await send('en-US')).body).toMatchObject({ success: false, message: 'Wrong username or password, or the user is banned' });
    expect((await send()).body).toMatchObject({ success: false, message: 'Wrong username or password, or the user is banned' });
  });

  it('console envelope: a check of the input (zod) in both languages', async () => {
    const app = getApp();
    const u = await makeUser(app);
    const token = 'tok'.padEnd(32, 'x');
    await app.knex('users').where({ id: u.id }).update({ access_token: token });
    const redeem = (lang: string) =>
      app.http().post('/api/user/topup').set('Authorization', token).set('New-Api-User', String(u.id)).set('Accept-Language', lang).send({ key: '' });
    expect((await redeem('zh')).body).toMatchObject({ success: false, message: '请输入兑换码！' });
    expect((await redeem('en')).body).toMatchObject({ success: false, message: 'Please enter a redemption code!' });
  });

  it('relay, OpenAI error body: an unknown key in zh, en and (no header) English', async () => {
    const app = getApp();
    const call = (lang?: string) => {
      const r = request(app.callback).post('/v1/chat/completions').set('Authorization', 'Bearer sk-unknown-key-000000000000');
      return (lang ? r.set('Accept-Language', lang) : r).send({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });
    };
    const zhRes = await call('zh');
    expect(zhRes.status).toBe(401);
    expect(zhRes.body.error).toMatchObject({ message: '无效的令牌', code: 'invalid_api_key' });
    expect((await call('en')).body.error).toMatchObject({ message: 'Invalid API key', code: 'invalid_api_key' });
    expect((await call()).body.error).toMatchObject({ message: 'Invalid API key', code: 'invalid_api_key' });
  });

  it('relay, Claude error body: the same refusal in the Claude shape in both languages', async () => {
    const app = getApp();
    const call = (lang: string) =>
      app
        .http()
        .post('/v1/messages')
        .set('x-api-key', 'sk-unknown-key-000000000000')
        .set('anthropic-version', '2023-06-01')
        .set('Accept-Language', lang)
        .send({ model: 'claude-x', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    const zhRes = await call('zh-CN');
    expect(zhRes.status).toBe(401);
    expect(zhRes.body).toMatchObject({ type: 'error', error: { message: '无效的令牌' } });
    expect((await call('en-GB')).body).toMatchObject({ type: 'error', error: { message: 'Invalid API key' } });
  });

  it('relay: a model without a channel, with its parameters, in both languages', async () => {
    const app = getApp();
    const call = (lang: string) =>
      app
        .http()
        .post('/v1/chat/completions')
        .set('Authorization', `Bearer ${key}`)
        .set('Accept-Language', lang)
        .send({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    const zhRes = await call('zh');
    const enRes = await call('en');
    expect(zhRes.status).toBe(enRes.status);
    expect(zhRes.body.error.code).toBe(enRes.body.error.code);
    expect(zhRes.body.error.message).toMatch(/no-such-model/);
    expect(zhRes.body.error.message).toMatch(HAN);
    expect(enRes.body.error.message).toMatch(/no-such-model/);
    expect(enRes.body.error.message).not.toMatch(HAN);
  });
});

describe.each(DB_TARGETS.map((target) => [target.name, target] as const))('stored text in SERVER_LANGUAGE [%s]', (_name, target) => {
  it.each([
    ['zh', '新用户注册赠送 ＄0.5 额度'],
    ['en', 'New user gift: $0.5 quota'],
  ] as const)('a usage-log line is written in %s', async (serverLanguage, expected) => {
    const app = await buildApp(target, { config: { serverLanguage } });
    try {
      await setupRoot(app);
      await app.ctx.options.set('QuotaForNewUser', String(app.ctx.options.quotaPerUnit / 2));
      const u = await makeUser(app);
      const row = await app.knex('logs').where({ user_id: u.id }).first();
      expect(row.content).toBe(expected);
    } finally {
      await app.close();
    }
  });
});
