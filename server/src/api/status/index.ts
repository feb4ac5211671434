import { BadRequestError } from '../../lib/errors';
import { parse } from '../../lib/validate';
import { runSetup, setupState } from '../../services/setup';
import { startSession } from '../../services/sessions';
import { assertNotCrossSite } from '../../middleware/auth';
import { clientUser } from '../../repositories/users';
import { statusObject } from '../../services/status';
import { checkForUpdate } from '../../services/updateCheck';
import { ok, type ConsoleRoutes } from '../route';
import { rootAccountBody, setupBody, setupModesBody } from './schema';

/** Public facts (status, notice, about, home page) and the first-run setup. */
export function register(api: ConsoleRoutes): void {
  const { app } = api;
  api.route({ method: 'get', path: '/api/status', summary: 'The public status object (answered before setup too).', access: 'public' }, async (ctx) => {
    ok(ctx, await statusObject(app));
  });
  api.route({ method: 'get', path: '/api/notice', summary: 'The notice text.', access: 'public' }, (ctx) => {
    ok(ctx, app.options.get('Notice'));
  });
  api.route(
    { method: 'get', path: '/api/status/update', summary: "This server's version against the newest release of the configured feed.", access: 'admin' },
    async (ctx) => {
      ok(ctx, await checkForUpdate(app));
    },
  );
  api.route({ method: 'get', path: '/api/about', summary: 'The about page content.', access: 'public' }, (ctx) => {
    ok(ctx, app.options.get('About'));
  });
  api.route({ method: 'get', path: '/api/home_page_content', summary: 'The home page content.', access: 'public' }, (ctx) => {
    ok(ctx, app.options.get('HomePageContent'));
  });

  api.route({ method: 'get', path: '/api/setup', summary: 'Whether the first-run setup happened.', access: 'public' }, async (ctx) => {
    ok(ctx, await setupState(app));
  });

  // The modes are checked first; the root account only when none exists yet (inside the setup).
  api.route(
    { method: 'post', path: '/api/setup', summary: 'First-run setup: the root user and the usage mode.', access: 'public', documentedBody: setupBody },
    async (ctx) => {
      assertNotCrossSite(ctx); // it logs the caller in
      const body = ctx.request.body ?? {};
      const root = await runSetup(app, {
        modes: () => parse(setupModesBody, body),
        rootAccount() {
          const input = parse(rootAccountBody, body);
          if (input.password !== input.confirmPassword) throw new BadRequestError('setup.password_mismatch');
          return input;
        },
      });
      // The operator who just chose root's password is logged in as root (the console goes on to
      // the console, not to a logged-out home page). A root made earlier logs in as usual.
      if (root) {
        await startSession(app, ctx, root);
        ok(ctx, clientUser(root, { owner: true }), 'setup.done');
      } else ok(ctx, null, 'setup.done');
    },
  );
}
