import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { RegisteredRoute } from './route';

/** `/api/user/:id` → `/api/user/{id}` (OpenAPI's path template). */
export const openApiPath = (koaPath: string): string => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const envelope = z
  .object({
    success: z.boolean(),
    message: z.string(),
    data: z.unknown(),
  })
  .meta({ id: 'Envelope', description: 'Every answer: HTTP 200 for handled outcomes, also when success is false.' });

const ROLE_NOTE = {
  public: 'No login needed.',
  user: 'Needs a login (role ≥ 1).',
  admin: 'Needs an admin (role ≥ 10).',
  root: 'Needs root (role 100).',
} as const;

/** The OpenAPI 3.1 description of the console API, built from the same route list that mounts it. */
export function openApiDocument(routes: readonly RegisteredRoute[], version: string): object {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: 'session' });
  registry.registerComponent('securitySchemes', 'accessToken', { type: 'apiKey', in: 'header', name: 'Authorization' });
  for (const r of routes) {
    registry.registerPath({
      method: r.method,
      path: openApiPath(r.path),
      summary: r.summary,
      description: ROLE_NOTE[r.access],
      tags: [r.tag],
      security: r.access === 'public' ? [] : [{ session: [] }, { accessToken: [] }],
      request: {
        // Path parameters arrive as text; the route's own schema may narrow them further.
        params: r.params ? z.object(Object.fromEntries(Object.keys((r.params as z.ZodObject).shape).map((k) => [k, z.string()]))) : undefined,
        query: (r.query ?? r.documentedQuery) as z.ZodObject | undefined,
        body: (r.body ?? r.documentedBody) ? { content: { 'application/json': { schema: (r.body ?? r.documentedBody)! } } } : undefined,
      },
      responses: {
        200: { description: 'The envelope `{ success, message, data }`.', content: { 'application/json': { schema: envelope } } },
        401: { description: 'A login is needed and missing.' },
        403: { description: 'The role is too low.' },
        429: { description: 'Rate limited.' },
      },
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Gateway console API', version, description: 'The calls the console makes under /api. See docs/console-api.md.' },
  });
}
