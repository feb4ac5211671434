/**
 * Providers' balance endpoints on the mock upstream, in their published shapes (each refuses a
 * request without its credential, and a key containing `expired` with the provider's 401):
 * - DeepSeek `GET /user/balance` → `{is_available, balance_infos:[{currency, total_balance, …}]}`
 *   (`/cny/user/balance`: a CNY-only account).
 * - OpenRouter `GET /v1/credits` → `{data:{total_credits, total_usage}}`.
 * - SiliconCloud `GET /v1/user/info` → `{code:20000, status:true, data:{balance, totalBalance, …}}`.
 * - Moonshot `GET /v1/users/me/balance` → `{code:0, data:{available_balance, voucher_balance,
 *   cash_balance}, scode:'0x0', status:true}` (CNY).
 * AI Proxy's overview is in aiproxyLibrary.ts; OpenAI's billing routes are built into the mock.
 */
import type { MockUpstream, MockRequest } from './index';
import type http from 'node:http';

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function bearer(req: MockRequest, res: http.ServerResponse): boolean {
  const a = String(req.headers.authorization ?? '');
  if (!/^Bearer \S+/.test(a) || a.includes('expired')) {
    send(res, 401, { error: { message: 'Authentication Fails (no such user)', type: 'authentication_error', code: 'invalid_request_error' } });
    return false;
  }
  return true;
}

export function installBalanceMocks(mock: MockUpstream): void {
  mock.route('GET', /^\/(cny\/)?user\/balance$/, (req, res) => {
    if (!bearer(req, res)) return;
    const cnyOnly = req.path.startsWith('/cny/');
    const infos = [{ currency: 'CNY', total_balance: '73.00', granted_balance: '0.00', topped_up_balance: '73.00' }];
    if (!cnyOnly) infos.push({ currency: 'USD', total_balance: '110.50', granted_balance: '10.00', topped_up_balance: '100.50' });
    send(res, 200, { is_available: true, balance_infos: infos });
  });
  mock.route('GET', /^\/v1\/credits$/, (req, res) => {
    if (bearer(req, res)) send(res, 200, { data: { total_credits: 50, total_usage: 12.25 } });
  });
  mock.route('GET', /^\/v1\/user\/info$/, (req, res) => {
    if (bearer(req, res))
      send(res, 200, {
        code: 20000,
        message: 'OK',
        status: true,
        data: { id: 'u1', balance: '8.0', chargeBalance: '1.0', totalBalance: '9.0', status: 'normal' },
      });
  });
  mock.route('GET', /^\/v1\/users\/me\/balance$/, (req, res) => {
    if (bearer(req, res)) send(res, 200, { code: 0, data: { available_balance: 146, voucher_balance: 46, cash_balance: 100 }, scode: '0x0', status: true });
  });
}
