import { z } from 'zod';
import { DB_TARGETS, describeEach } from '../helpers/app';
import { consoleApi } from '../../server/src/api';
import { openApiPath } from '../../server/src/api/openapi';
import { parse } from '../../server/src/lib/validate';

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
  const schema = z.object({ name: z.string().max(3, '名称过长'), count: z.number() });
  it("answers a rule's own message as written", () => {
    expect(() => parse(schema, { name: 'abcd', count: 1 })).toThrow(/^名称过长$/);
  });
  it('names the field of a generic issue', () => {
    expect(() => parse(schema, { name: 'a', count: 'x' })).toThrow(/^参数错误：count: /);
  });
});
