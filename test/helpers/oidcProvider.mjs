// A real OpenID provider for the OIDC login tests (run as a child process by oauthFakes.ts).
// Prints "ISSUER <url>" once listening.
import http from 'node:http';
import { Provider } from 'oidc-provider';

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.OIDC_CLIENT_ID,
      client_secret: process.env.OIDC_CLIENT_SECRET,
      redirect_uris: [process.env.OIDC_REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email', 'email_verified'] },
  async findAccount(_ctx, sub) {
    return {
      accountId: sub,
      async claims() {
        return { sub, name: `Name ${sub}`, preferred_username: sub, email: `${sub}@oidc.test`, email_verified: true };
      },
    };
  },
  pkce: { required: () => true },
  cookies: { keys: ['oidc-test-cookie-key'] },
  features: { devInteractions: { enabled: true } },
});
provider.on('server_error', (_ctx, err) => console.error('server_error', err));
server.on('request', provider.callback());
process.stdout.write(`ISSUER ${issuer}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
