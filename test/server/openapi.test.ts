import { z } from 'zod';
import { DB_TARGETS, describeEach } from '../helpers/app';
import { consoleApi } from '../../server/src/api';
import { openApiPath } from '../../server/src/api/openapi';
import { parse } from '../../server/src/lib/validate';
import type { BadRequestError } from '../../server/src/lib/errors';
import { t } from '../../server/src/i18n';

type Doc = { openapi: string; paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }>; requestBody?: unknown }>> };

describeEach(DB_TARGETS.slice(0, 1), 'console API description', (app) => {
  it('describes every mounted route, and only those', async () => {
    const res = await app().http().get('/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body as Doc;
    expect(doc.openapi).toBe('3.1.0');
    const described = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));

    // The same router the app mounts (api/index.ts builds it once per app).
    const { router } = consoleApi(app().ctx);
    const mounted = new Set<string>();
    for (const layer of router.stack) {
      for (const method of layer.methods) if (method !== 'HEAD') mounted.add(`${method} ${openApiPath(String(layer.path))}`);
    }
    expect(mounted.size).toBeGreaterThan(80);
    expect([...mounted].filter((r) => !described.has(r))).toEqual([]);
    expect([...described].filter((r) => !mounted.has(r))).toEqual([]);
  });

  it('describes params, query and bodies, also of routes without a body schema', async () => {
    const doc = (await app().http().get('/api/openapi.json')).body as Doc;
    const tokenById = doc.paths['/api/token/{id}']!;
    expect(tokenById.get!.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'id', in: 'path' })]));
    expect(doc.paths['/api/token/search']!.get!.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['keyword', 'token', 'p', 'page_size']));
    expect(doc.paths['/api/token']!.post!.requestBody).toBeDefined();
    expect(doc.paths['/api/user/self']!.get).toBeDefined();
  });
});

describe('input error map', () => {
  const schema = z.object({ name: z.string().max(3, 'channel.tag_too_long'), count: z.number(), note: z.string().max(1, '名称过长') });
  const failure = (input: unknown) => {
    try {
      parse(schema, input);
    } catch (err) {
      return err as BadRequestError;
    }
    throw new Error('parsed');
  };
  it("answers a rule's own message (a catalogue key) in each language, other text as written", () => {
    const err = failure({ name: 'abcd', count: 1, note: '' });
    expect(err.message).toBe('The tag must not be longer than 128 characters');
    expect(t('zh', err.msg)).toBe('标签长度不能超过 128');
    expect(t('en', failure({ name: 'a', count: 1, note: 'ab' }).msg)).toBe('名称过长');
  });
  it('names the field of a generic issue', () => {
    const err = failure({ name: 'a', count: 'x', note: '' });
    expect(err.message).toMatch(/^Invalid parameter: count: /);
    expect(t('zh', err.msg)).toMatch(/^参数错误：count: /);
  });
});
