import { z } from 'zod';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { assertNotCrossSite, currentUser } from '../../middleware/auth';
import { clientUser } from '../../repositories/users';
import { startSession } from '../../services/sessions';
import {
  adminResetPasskeys,
  deleteOwnPasskey,
  finishLogin,
  finishRegistration,
  finishVerify,
  listPasskeys,
  loginOptions,
  registrationOptions,
  renameOwnPasskey,
  verifyOptions,
} from '../../services/passkeys';
import { markVerified, requireFreshVerification, verificationStatus, verifyWithSecret } from '../../services/secureVerification';
import {
  adminResetTwoFactor,
  adminTwoFactorStats,
  checkSecondFactor,
  disableTwoFactor,
  enableTwoFactorWithCode,
  finishPendingLogin,
  regenerateBackupCodes,
  setupTwoFactor,
  twoFactorStatus,
} from '../../services/twoFactor';
import { idParams, ok, type ConsoleRoutes } from '../route';

const code = z.string().max(64, 'verify.code_format');
const codeBody = z.object({ code: code.optional().default('') });
const optionalCodeBody = z.object({ code: code.optional() });
/** A WebAuthn response as @simplewebauthn/browser builds it; the library checks its insides. */
const credential = z
  .object({ id: z.string().max(1024), rawId: z.string().max(1024), type: z.string().max(32), response: z.record(z.string(), z.unknown()) })
  .passthrough();
const credentialBody = z.object({ credential });
const registerFinishBody = z.object({ name: z.string().max(256).optional().default(''), credential });
const renameBody = z.object({ name: z.string().max(256).optional().default('') });
const verifyBody = z.object({
  method: z.enum(['2fa', 'passkey', 'password'], { message: 'verify.method_unsupported' }),
  code: code.optional(),
  password: z.string().max(128).optional(),
});

/** Two-factor login, passkeys and re-verification (docs/security.md). */
export function registerSecurity(api: ConsoleRoutes): void {
  const { app } = api;

  /* ---------------------------------------------------------------- re-verification */
  api.route(
    { method: 'get', path: '/api/verify', summary: 'Whether this session is re-verified now, and how it can re-verify.', access: 'user' },
    async (ctx) => {
      ok(ctx, await verificationStatus(app, ctx, currentUser(ctx)));
    },
  );
  api.route(
    {
      method: 'post',
      path: '/api/verify',
      summary: 'Re-verify with a 2FA/backup code or the password (passkeys: /api/user/passkey/verify/*).',
      access: 'user',
      body: verifyBody,
    },
    async (ctx) => {
      ok(ctx, await verifyWithSecret(app, ctx, currentUser(ctx), ctx.ip, ctx.input.body), 'verify.ok');
    },
  );

  /* ---------------------------------------------------------------- 2FA */
  api.route(
    {
      method: 'post',
      path: '/api/user/login/2fa',
      summary: 'Second login step: a TOTP or backup code; sets the session cookie.',
      access: 'public',
      body: codeBody,
    },
    async (ctx) => {
      assertNotCrossSite(ctx);
      const user = await finishPendingLogin(app, ctx, ctx.ip, ctx.input.body.code);
      await startSession(app, ctx, user);
      ok(ctx, clientUser(user, { owner: true }), 'user.login_ok');
    },
  );
  api.route({ method: 'get', path: '/api/user/2fa/status', summary: "The caller's 2FA state and unused backup codes.", access: 'user' }, async (ctx) => {
    ok(ctx, await twoFactorStatus(app, currentUser(ctx)));
  });
  api.route(
    {
      method: 'post',
      path: '/api/user/2fa/setup',
      summary: 'Start enrolment: a new secret, its otpauth URI and QR code (needs re-verification).',
      access: 'user',
    },
    async (ctx) => {
      await requireFreshVerification(app, ctx, currentUser(ctx));
      ok(ctx, await setupTwoFactor(app, currentUser(ctx)), '2fa.scan_qr');
    },
  );
  api.route(
    {
      method: 'post',
      path: '/api/user/2fa/enable',
      summary: 'Confirm enrolment with a code; answers ten backup codes, shown once.',
      access: 'user',
      body: codeBody,
    },
    async (ctx) => {
      ok(ctx, await enableTwoFactorWithCode(app, currentUser(ctx), ctx.ip, ctx.input.body.code), '2fa.enabled');
    },
  );
  api.route(
    {
      method: 'post',
      path: '/api/user/2fa/disable',
      summary: 'Turn 2FA off with a code, or after a fresh re-verification.',
      access: 'user',
      body: optionalCodeBody,
    },
    async (ctx) => {
      const user = currentUser(ctx);
      if (ctx.input.body.code) await checkSecondFactor(app, user, ctx.ip, ctx.input.body.code);
      else await requireFreshVerification(app, ctx, user);
      await disableTwoFactor(app, user.id);
      ok(ctx, null, '2fa.disabled');
    },
  );
  api.route(
    {
      method: 'post',
      path: '/api/user/2fa/backup_codes',
      summary: 'New backup codes (a code, or a fresh re-verification); the old ones stop working.',
      access: 'user',
      body: optionalCodeBody,
    },
    async (ctx) => {
      const user = currentUser(ctx);
      if (ctx.input.body.code) await checkSecondFactor(app, user, ctx.ip, ctx.input.body.code);
      else await requireFreshVerification(app, ctx, user);
      ok(ctx, await regenerateBackupCodes(app, user.id), '2fa.backup_regenerated');
    },
  );
  api.route({ method: 'get', path: '/api/user/2fa/stats', summary: 'How many users have 2FA on.', access: 'admin' }, async (ctx) => {
    ok(ctx, await adminTwoFactorStats(app));
  });

  /* ---------------------------------------------------------------- passkeys */
  api.route({ method: 'get', path: '/api/user/passkey', summary: "The caller's passkeys.", access: 'user' }, async (ctx) => {
    ok(ctx, await listPasskeys(app, currentUser(ctx).id));
  });
  api.route(
    { method: 'post', path: '/api/user/passkey/register/begin', summary: 'Options to create a passkey (needs re-verification).', access: 'user' },
    async (ctx) => {
      await requireFreshVerification(app, ctx, currentUser(ctx));
      ok(ctx, { options: await registrationOptions(app, ctx, currentUser(ctx)) });
    },
  );
  api.route(
    { method: 'post', path: '/api/user/passkey/register/finish', summary: 'Store the new passkey under a name.', access: 'user', body: registerFinishBody },
    async (ctx) => {
      const b = ctx.input.body;
      ok(
        ctx,
        await finishRegistration(app, ctx, currentUser(ctx), { name: b.name, credential: b.credential as unknown as RegistrationResponseJSON }),
        'passkey.registered',
      );
    },
  );
  api.route(
    { method: 'post', path: '/api/user/passkey/login/begin', summary: 'Options for a passkey login (discoverable credentials).', access: 'public' },
    async (ctx) => {
      assertNotCrossSite(ctx);
      ok(ctx, { options: await loginOptions(app, ctx) });
    },
  );
  api.route(
    {
      method: 'post',
      path: '/api/user/passkey/login/finish',
      summary: 'Log in with the signed assertion; sets the session cookie.',
      access: 'public',
      body: credentialBody,
    },
    async (ctx) => {
      assertNotCrossSite(ctx);
      const user = await finishLogin(app, ctx, ctx.input.body.credential as unknown as AuthenticationResponseJSON);
      await startSession(app, ctx, user);
      ok(ctx, clientUser(user, { owner: true }), 'user.login_ok');
    },
  );
  api.route(
    { method: 'post', path: '/api/user/passkey/verify/begin', summary: "Options to re-verify with one of the caller's passkeys.", access: 'user' },
    async (ctx) => {
      ok(ctx, { options: await verifyOptions(app, ctx, currentUser(ctx)) });
    },
  );
  api.route(
    { method: 'post', path: '/api/user/passkey/verify/finish', summary: 'Re-verify with the signed assertion.', access: 'user', body: credentialBody },
    async (ctx) => {
      const user = currentUser(ctx);
      await finishVerify(app, ctx, user, ctx.input.body.credential as unknown as AuthenticationResponseJSON);
      ok(ctx, { method: 'passkey', ...(await markVerified(app, ctx, user, 'passkey')) }, 'verify.ok');
    },
  );
  api.route(
    { method: 'put', path: '/api/user/passkey/:id', summary: 'Rename one of the caller’s passkeys.', access: 'user', params: idParams, body: renameBody },
    async (ctx) => {
      await renameOwnPasskey(app, currentUser(ctx), ctx.input.params.id, ctx.input.body.name);
      ok(ctx, null, 'common.updated_short');
    },
  );
  api.route(
    {
      method: 'delete',
      path: '/api/user/passkey/:id',
      summary: 'Delete one of the caller’s passkeys (needs re-verification).',
      access: 'user',
      params: idParams,
    },
    async (ctx) => {
      await requireFreshVerification(app, ctx, currentUser(ctx));
      await deleteOwnPasskey(app, currentUser(ctx), ctx.input.params.id);
      ok(ctx, null, 'passkey.deleted');
    },
  );

  /* ---------------------------------------------------------------- administration */
  api.route(
    { method: 'delete', path: '/api/user/:id/2fa', summary: 'Turn off 2FA of a user below the caller.', access: 'admin', params: idParams },
    async (ctx) => {
      await adminResetTwoFactor(app, currentUser(ctx), ctx.input.params.id);
      ok(ctx, null, '2fa.reset_by_admin');
    },
  );
  api.route(
    { method: 'delete', path: '/api/user/:id/reset_passkey', summary: 'Delete every passkey of a user below the caller.', access: 'admin', params: idParams },
    async (ctx) => {
      await adminResetPasskeys(app, currentUser(ctx), ctx.input.params.id);
      ok(ctx, null, 'passkey.reset_by_admin');
    },
  );
}
