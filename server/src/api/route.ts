import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../context';
import { parse, parseId } from '../lib/validate';
import { BadRequestError } from '../lib/errors';
import { requireAuth } from '../middleware/auth';
import { requestLang, t, type Message, type MessageKey } from '../i18n';

export type Method = 'get' | 'post' | 'put' | 'delete';

/** Who may call a route: anyone, or a logged-in user with at least that role (1, 10, 100). */
export type Access = 'public' | 'user' | 'admin' | 'root';
const MIN_ROLE = { user: 1, admin: 10, root: 100 } as const;

type Schema = z.ZodType | undefined;
type Out<S extends Schema> = S extends z.ZodType ? z.infer<S> : undefined;

/** The checked input of a route, as its schemas produced it. */
export interface Input<B extends Schema, Q extends Schema, P extends Schema> {
  body: Out<B>;
  query: Out<Q>;
  params: Out<P>;
}

export type InputContext<I> = RouterContext & { input: I };

/**
 * One console route: where it lives, who may call it, and the shape of its input. The same
 * description mounts the route and documents it (api/openapi.ts), so the two cannot drift apart.
 */
export interface RouteSpec<B extends Schema, Q extends Schema, P extends Schema> {
  method: Method;
  /** Koa path, `:name` for parameters. */
  path: string;
  summary: string;
  access: Access;
  body?: B;
  query?: Q;
  /**
   * Path parameters. A route whose parameters do not parse is not this route: the request falls
   * through to the next one (e.g. `/api/user/:id` takes numeric ids only), before any login check.
   */
  params?: P;
  /** Documents a body the handler parses itself (its schema depends on the query). */
  documentedBody?: z.ZodType;
  /** Documents a query the service reads itself. */
  documentedQuery?: z.ZodType;
  /** Runs after the login check and before the input is parsed (e.g. the bot check). */
  before?: Koa.Middleware[];
}

export interface RegisteredRoute {
  method: Method;
  path: string;
  summary: string;
  access: Access;
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  documentedBody?: z.ZodType;
  documentedQuery?: z.ZodType;
  tag: string;
}

const check = <S extends Schema>(schema: S, value: unknown): Out<S> => (schema ? parse(schema, value) : undefined) as Out<S>;

/**
 * Koa middleware that parses the body and query with the given schemas and hands the result to
 * the route as `ctx.input` (an absent body counts as `{}`). Failures are answered as handled
 * `success: false` with the message of the first issue.
 */
export function validate<B extends Schema, Q extends Schema>(schemas: { body?: B; query?: Q }): Koa.Middleware {
  return async (ctx, next) => {
    const input = (ctx as unknown as { input?: Record<string, unknown> }).input ?? {};
    input.body = check(schemas.body, ctx.request.body ?? {});
    input.query = check(schemas.query, ctx.query);
    (ctx as unknown as { input: unknown }).input = input;
    await next();
  };
}

/** The console API's routes of one area, mounted on the shared router and recorded for the docs. */
export class ConsoleRoutes {
  constructor(
    readonly router: Router,
    readonly app: AppContext,
    private readonly registered: RegisteredRoute[],
    private readonly tag: string,
  ) {}

  route<B extends Schema = undefined, Q extends Schema = undefined, P extends Schema = undefined>(
    spec: RouteSpec<B, Q, P>,
    handler: (ctx: InputContext<Input<B, Q, P>>) => Promise<void> | void,
  ): void {
    this.registered.push({ ...spec, tag: this.tag });
    const chain: Koa.Middleware[] = [];
    if (spec.access !== 'public') chain.push(requireAuth(this.app, MIN_ROLE[spec.access]));
    chain.push(...(spec.before ?? []));
    chain.push(validate({ body: spec.body, query: spec.query }));
    chain.push((ctx) => handler(ctx as unknown as InputContext<Input<B, Q, P>>));
    const run = compose(chain);
    const params = spec.params;
    const layer: Koa.Middleware = params
      ? async (ctx, next) => {
          const result = params.safeParse((ctx as unknown as RouterContext).params ?? {});
          if (!result.success) return next();
          (ctx as unknown as { input: Record<string, unknown> }).input = { params: result.data };
          return run(ctx, next);
        }
      : run;
    this.router[spec.method](spec.path, layer);
  }
}

function compose(chain: Koa.Middleware[]): Koa.Middleware {
  return (ctx, next) => {
    const step = (i: number): Promise<void> => {
      const mw = chain[i];
      if (!mw) return next();
      return Promise.resolve(mw(ctx, () => step(i + 1)));
    };
    return step(0);
  };
}

type Envelope = { body: unknown; get(field: string): string; state?: Record<string, unknown> };

/**
 * The success envelope of the console API; `message` in the caller's language. `beside` holds
 * the fields some answers carry next to `data` (new-api's shapes, e.g. pricing's `group_ratio`).
 */
export function ok(ctx: Envelope, data: unknown = null, message?: MessageKey | Message, beside?: Record<string, unknown>): void {
  reply(ctx, true, message, { data, ...beside });
}

/**
 * The envelope with its fields as given, for the answers ok() cannot shape: a handled outcome
 * whose `success` the service decides (a channel test, with `time` and no error to throw), or an
 * answer written outside the error middleware (the 404 of an unknown path). An error a route can
 * throw goes through the error middleware instead (lib/errors).
 */
export function reply(ctx: Envelope, success: boolean, message: MessageKey | Message | undefined, fields: Record<string, unknown>): void {
  ctx.body = { success, message: message ? t(requestLang(ctx), message) : '', ...fields };
}

/** The one reading of a numeric `:id` path parameter (lib/validate `parseId`): the id, or undefined. */
const numericId = z.string().transform((raw) => parseId(raw));

/** Numeric `:id` path parameter; anything else is not this route (the request falls through). */
export const idParams = z.object({ id: numericId.pipe(z.number({ error: 'not a numeric id' })) });

/**
 * `:id` of a route that answers a bad id itself, after the login check, rather than falling
 * through: the same reading, `undefined` when the text is not a numeric id.
 */
export const answeredIdParams = z.object({ id: numericId });

/** Routes whose body must be a JSON object say so with this one message (absent, array or text). */
export const objectBody: Koa.Middleware = async (ctx, next) => {
  const body = ctx.request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('body.not_object');
  await next();
};

/** `?status_only=true|1`: the update changes only the status. */
export const statusOnlyQuery = z.object({ status_only: z.string().optional() });
export const isStatusOnly = (q: { status_only?: string }) => q.status_only === 'true' || q.status_only === '1';
