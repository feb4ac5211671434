import type { Dispatcher } from 'undici';
import type { AppContext } from '../context';
import { UpstreamExchange } from './upstreamExchange';
import type { UpstreamRequest } from './types';
import { upstreamTimedOut } from './upstream';

/**
 * One upstream request for the console's channel operations (test, models, balance) and token
 * fetches: the relay's own exchange, so the same bounds hold; `signal` aborts it in any phase.
 */
export async function sendUpstream(
  app: AppContext,
  req: UpstreamRequest,
  signal?: AbortSignal,
  proxy?: string,
  dispatcher?: Dispatcher,
): Promise<UpstreamResponse> {
  if (signal?.aborted) throw upstreamTimedOut();
  const ex = UpstreamExchange.open(app, req, proxy, dispatcher);
  if (!signal) return ex.ready;
  // Left attached: the signal also bounds the body read that follows (a no-op once it is done).
  signal.addEventListener('abort', () => ex.abort(upstreamTimedOut()), { once: true });
  return ex.ready;
}

export type UpstreamResponse = UpstreamExchange;

/** Reads a whole upstream body (bounded); stream failures become an UpstreamError. */
export function readBody(res: UpstreamResponse, limit = 64 * 1024 * 1024): Promise<Buffer> {
  return res.collect(limit);
}
