import { createApi, type FetchLike } from '../lib/http';

export interface Recorded {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** A fake transport that records every request and answers from a queue (default: success). */
export function recorder(userId: number | null = 7) {
  const calls: Recorded[] = [];
  const answers: Array<{ status?: number; body: unknown }> = [];
  let unauthorized = 0;
  const fetch: FetchLike = async (url, init) => {
    calls.push({ url, method: init.method, headers: init.headers, body: init.body === undefined ? undefined : JSON.parse(init.body) });
    const next = answers.shift() ?? { body: { success: true, message: '', data: null } };
    return { status: next.status ?? 200, statusText: 'x', text: async () => (typeof next.body === 'string' ? next.body : JSON.stringify(next.body)) };
  };
  const http = createApi({ fetch, getUserId: () => userId ?? undefined, onUnauthorized: () => void unauthorized++ });
  return {
    http,
    calls,
    /** Queue the next answer's `data` (success) or a full answer. */
    answer(data: unknown, extra: Record<string, unknown> = {}) {
      answers.push({ body: { success: true, message: '', data, ...extra } });
    },
    answerRaw(status: number, body: unknown) {
      answers.push({ status, body });
    },
    get last(): Recorded {
      return calls[calls.length - 1]!;
    },
    get unauthorized() {
      return unauthorized;
    },
  };
}
