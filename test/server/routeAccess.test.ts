import { buildApp, loginAgent, makeUser, setupRoot, type LoggedIn, type TestApp } from '../helpers/app';
import { consoleApi } from '../../server/src/api';
import type { Access } from '../../server/src/api/route';

/**
 * Who may call each console route, reviewed by hand. A route added, removed or given another
 * access level fails this test until the table says so: widening access is a decision, not a
 * side effect. The server enforces each level for every route (visitor, user, admin below).
 */
const EXPECTED: Record<string, Access> = {
  // public
  'GET /api/about': 'public',
  'GET /api/home_page_content': 'public',
  'GET /api/notice': 'public',
  'GET /api/oauth/github': 'public',
  'GET /api/oauth/github/authorize': 'public',
  'GET /api/oauth/linuxdo': 'public',
  'GET /api/oauth/linuxdo/authorize': 'public',
  'GET /api/oauth/oidc': 'public',
  'GET /api/oauth/oidc/authorize': 'public',
  'GET /api/oauth/state': 'public',
  'GET /api/oauth/telegram': 'public',
  'GET /api/oauth/telegram/bind': 'public',
  'GET /api/oauth/telegram/login': 'public',
  'GET /api/oauth/wechat': 'public',
  'GET /api/openapi.json': 'public',
  'GET /api/pricing': 'public',
  'GET /api/reset_password': 'public',
  'GET /api/setup': 'public',
  'POST /api/setup': 'public',
  'GET /api/status': 'public',
  'GET /api/user/epay/notify': 'public',
  'POST /api/user/epay/notify': 'public',
  'POST /api/user/login': 'public',
  'POST /api/user/login/2fa': 'public',
  'GET /api/user/logout': 'public',
  'POST /api/user/passkey/login/begin': 'public',
  'POST /api/user/passkey/login/finish': 'public',
  'POST /api/user/register': 'public',
  'POST /api/user/reset': 'public',
  'GET /api/verification': 'public',
  // user
  'GET /api/data/self': 'user',
  'GET /api/log/self': 'user',
  'GET /api/log/self/stat': 'user',
  'GET /api/mj/self': 'user',
  'GET /api/models': 'user',
  'GET /api/oauth/email/bind': 'user',
  'POST /api/oauth/telegram/bind_state': 'user',
  'GET /api/oauth/wechat/bind': 'user',
  'GET /api/task/self': 'user',
  'GET /api/token': 'user',
  'POST /api/token': 'user',
  'PUT /api/token': 'user',
  'DELETE /api/token/:id': 'user',
  'GET /api/token/:id': 'user',
  'GET /api/token/search': 'user',
  'POST /api/token/:id/key': 'user',
  'POST /api/user/2fa/backup_codes': 'user',
  'POST /api/user/2fa/disable': 'user',
  'POST /api/user/2fa/enable': 'user',
  'POST /api/user/2fa/setup': 'user',
  'GET /api/user/2fa/status': 'user',
  'GET /api/user/aff': 'user',
  'POST /api/user/aff_transfer': 'user',
  'POST /api/user/amount': 'user',
  'POST /api/user/logout_all': 'user',
  'GET /api/user/models': 'user',
  'GET /api/user/passkey': 'user',
  'DELETE /api/user/passkey/:id': 'user',
  'PUT /api/user/passkey/:id': 'user',
  'POST /api/user/passkey/register/begin': 'user',
  'POST /api/user/passkey/register/finish': 'user',
  'POST /api/user/passkey/verify/begin': 'user',
  'POST /api/user/passkey/verify/finish': 'user',
  'POST /api/user/pay': 'user',
  'DELETE /api/user/self': 'user',
  'GET /api/user/self': 'user',
  'PUT /api/user/self': 'user',
  'GET /api/user/self/groups': 'user',
  'PUT /api/user/setting': 'user',
  'GET /api/user/token': 'user',
  'POST /api/user/topup': 'user',
  'GET /api/user/topup/self': 'user',
  'GET /api/verify': 'user',
  'POST /api/verify': 'user',
  // admin
  'GET /api/channel': 'admin',
  'POST /api/channel': 'admin',
  'PUT /api/channel': 'admin',
  'DELETE /api/channel/:id': 'admin',
  'GET /api/channel/:id': 'admin',
  'POST /api/channel/batch': 'admin',
  'POST /api/channel/batch/tag': 'admin',
  'POST /api/channel/copy/:id': 'admin',
  'DELETE /api/channel/disabled': 'admin',
  'POST /api/channel/fetch_models': 'admin',
  'GET /api/channel/fetch_models/:id': 'admin',
  'POST /api/channel/fix': 'admin',
  'GET /api/channel/health': 'admin',
  'GET /api/channel/models': 'admin',
  'GET /api/channel/models_enabled': 'admin',
  'POST /api/channel/multi_key/manage': 'admin',
  'GET /api/channel/search': 'admin',
  'PUT /api/channel/tag': 'admin',
  'POST /api/channel/tag/disabled': 'admin',
  'POST /api/channel/tag/enabled': 'admin',
  'GET /api/channel/test': 'admin',
  'GET /api/channel/test/:id': 'admin',
  'GET /api/channel/test/summary': 'admin',
  'GET /api/channel/types': 'admin',
  'GET /api/channel/update_balance': 'admin',
  'GET /api/channel/update_balance/:id': 'admin',
  'GET /api/data/': 'admin',
  'GET /api/group/': 'admin',
  'GET /api/log': 'admin',
  'GET /api/log/stat': 'admin',
  'GET /api/mj/': 'admin',
  'GET /api/option/': 'admin',
  'PUT /api/option/': 'admin',
  'POST /api/option/rest_model_ratio': 'admin',
  'GET /api/performance': 'admin',
  'GET /api/redemption': 'admin',
  'POST /api/redemption': 'admin',
  'PUT /api/redemption': 'admin',
  'DELETE /api/redemption/:id': 'admin',
  'GET /api/redemption/:id': 'admin',
  'GET /api/redemption/search': 'admin',
  'GET /api/status/update': 'admin',
  'GET /api/task/': 'admin',
  'GET /api/user/': 'admin',
  'POST /api/user/': 'admin',
  'PUT /api/user/': 'admin',
  'GET /api/user/2fa/stats': 'admin',
  'GET /api/user/:id': 'admin',
  'DELETE /api/user/:id/2fa': 'admin',
  'DELETE /api/user/:id/reset_passkey': 'admin',
  'POST /api/user/manage': 'admin',
  'GET /api/user/search': 'admin',
  'GET /api/user/topup': 'admin',
  // root
  'POST /api/channel/:id/key': 'root',
  'DELETE /api/log': 'root',
  'POST /api/oauth/oidc/discovery': 'root',
};

describe('console routes: the access table, enforced', () => {
  let app: TestApp;
  let user: LoggedIn;
  let admin: LoggedIn;
  let routes: Array<{ method: string; path: string; access: Access }>;

  beforeAll(async () => {
    app = await buildApp({ name: 'sqlite', db: 'sqlite', redis: false });
    await setupRoot(app);
    const u = await makeUser(app);
    user = await loginAgent(app, u.username, u.password);
    const a = await makeUser(app, { role: 10 });
    admin = await loginAgent(app, a.username, a.password);
    routes = consoleApi(app.ctx).routes;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('every mounted route has the access level the table gives it', () => {
    const actual = Object.fromEntries(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r.access]));
    expect(actual).toEqual(EXPECTED);
  });

  /** The route's path with its parameters filled in (every parameter is a numeric id). */
  const urlOf = (path: string) => path.replace(/:[a-z_]+/g, '1');
  const call = (who: LoggedIn | undefined, method: string, path: string) => {
    const m = method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
    if (who) return who[m === 'delete' ? 'del' : m](urlOf(path)).send({});
    return app.http()[m](urlOf(path)).send({});
  };

  it('a visitor is refused every route that needs a login', async () => {
    const refused: string[] = [];
    for (const r of routes.filter((x) => x.access !== 'public')) {
      const res = await call(undefined, r.method, r.path);
      if (res.status === 401 && res.body.success === false) refused.push(`${r.method} ${r.path}`);
      else refused.push(`${r.method} ${r.path} answered ${res.status}`);
    }
    expect(refused.filter((s) => s.includes(' answered '))).toEqual([]);
    expect(refused.length).toBeGreaterThan(90);
  });

  it('a user is refused every admin and root route; an admin every root route', async () => {
    const leaks: string[] = [];
    for (const r of routes) {
      const below: Array<[string, LoggedIn]> =
        r.access === 'admin'
          ? [['user', user]]
          : r.access === 'root'
            ? [
                ['user', user],
                ['admin', admin],
              ]
            : [];
      for (const [name, who] of below) {
        const res = await call(who, r.method, r.path);
        if (res.status !== 403 || res.body.success !== false) leaks.push(`${name}: ${r.method} ${r.path} answered ${res.status}`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
