import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import { clientIp, NO_PROXY_TRUST, type ProxyTrust } from './ip';

/**
 * What the relay needs of one HTTP exchange. Koa's context has exactly this shape (the playground,
 * which needs the console session, runs inside Koa); every other relay route gets a
 * `RelayHttpContext` straight from node:http, because Koa's per-request work (context and
 * delegate objects, on-finished listeners, body sniffing) is a measurable share of a relayed call
 * that does none of the things Koa is for here.
 */
export interface RelayHttp {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  /** URL path without the query (not decoded). */
  readonly path: string;
  /** Client address: the socket's peer, or what the trusted proxies saw (relay/ip.ts clientIp). */
  readonly ip: string;
  readonly query: ParsedUrlQuery;
  /** A request header ('' when absent). */
  get(field: string): string;
  set(field: string, value: string): void;
  status: number;
  body: unknown;
  /** false: the handler wrote the response itself. */
  respond?: boolean;
}

export class RelayHttpContext implements RelayHttp {
  readonly method: string;
  readonly path: string;
  private readonly search: string;
  private parsedQuery?: ParsedUrlQuery;
  private statusCode = 404;
  private statusSet = false;
  private bodyValue: unknown = undefined;
  respond = true;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    private readonly trustProxy: ProxyTrust = NO_PROXY_TRUST,
  ) {
    this.method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.path = q < 0 ? url : url.slice(0, q);
    this.search = q < 0 ? '' : url.slice(q + 1);
  }

  get ip(): string {
    return clientIp(this.req.socket.remoteAddress, this.req.headers['x-forwarded-for'], this.trustProxy);
  }

  get query(): ParsedUrlQuery {
    return (this.parsedQuery ??= parseQuery(this.search));
  }

  get(field: string): string {
    const v = this.req.headers[field.toLowerCase()];
    return Array.isArray(v) ? v.join(', ') : (v ?? '');
  }

  set(field: string, value: string): void {
    this.res.setHeader(field, value);
  }

  get status(): number {
    return this.statusCode;
  }

  set status(code: number) {
    this.statusCode = code;
    this.statusSet = true;
  }

  get body(): unknown {
    return this.bodyValue;
  }

  /** As in Koa: a body without an explicit status answers 200. */
  set body(value: unknown) {
    this.bodyValue = value;
    if (!this.statusSet) this.statusCode = 200;
  }

  /** Writes `status`/`body` unless the handler already answered (Koa's `respond` step, for JSON, text and empty bodies). */
  finish(): void {
    const res = this.res;
    if (!this.respond || res.headersSent || res.writableEnded || res.destroyed) return;
    res.statusCode = this.statusCode;
    const body = this.bodyValue;
    if (body === undefined || body === null || this.statusCode === 204 || this.statusCode === 304) {
      if (this.statusCode !== 204 && this.statusCode !== 304) res.setHeader('content-length', 0);
      res.end();
      return;
    }
    let out: Buffer;
    if (Buffer.isBuffer(body)) {
      out = body;
      if (!res.hasHeader('content-type')) res.setHeader('content-type', 'application/octet-stream');
    } else if (typeof body === 'string') {
      out = Buffer.from(body);
      if (!res.hasHeader('content-type')) res.setHeader('content-type', 'text/plain; charset=utf-8');
    } else {
      out = Buffer.from(JSON.stringify(body));
      if (!res.hasHeader('content-type')) res.setHeader('content-type', 'application/json; charset=utf-8');
    }
    res.setHeader('content-length', out.length);
    res.end(this.method === 'HEAD' ? undefined : out);
  }
}
