import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { upsertOptions } from '../repositories/options';
import { recordSetup, rootExists, setupRecorded } from '../repositories/setup';
import { ROLE } from '../repositories/users';
import { createAccount } from './accounts';

const flag = (app: AppContext) => app.memo('setupDone', () => ({ done: false }));

/** Whether the first-run setup happened (remembered once true; asked again until then). */
export async function isSetupDone(app: AppContext): Promise<boolean> {
  return flag(app).done || (await refreshSetup(app));
}

export async function refreshSetup(app: AppContext): Promise<boolean> {
  const done = await setupRecorded(app.knex);
  flag(app).done = done;
  return done;
}

export async function setupState(app: AppContext) {
  return { status: await isSetupDone(app), root_init: await rootExists(app.knex), database_type: app.db.kind };
}

/** The setup's input, checked step by step: the modes once setup is known to be due, the account only if needed. */
export interface SetupInput {
  modes(): { SelfUseModeEnabled: boolean; DemoSiteEnabled: boolean };
  /** Checks and returns the root account's fields; called only when no root exists yet. */
  rootAccount(): { username: string; password: string };
}

/** The first-run setup: creates the root user (unless one exists) and records the usage mode, once. */
export async function runSetup(app: AppContext, input: SetupInput): Promise<void> {
  if (await refreshSetup(app)) throw new BadRequestError('系统已经初始化完成');
  const hasRoot = await rootExists(app.knex);
  const modes = input.modes();
  if (modes.SelfUseModeEnabled && modes.DemoSiteEnabled) throw new BadRequestError('不能同时启用自用模式和演示站点模式');
  await app.knex
    .transaction(async (trx) => {
      await recordSetup(trx, app.config.version);
      if (!hasRoot) {
        const root = input.rootAccount();
        await createAccount(app, { username: root.username, password: root.password, role: ROLE.root, display_name: 'Root User' }, trx);
      }
      await upsertOptions(trx, { SelfUseModeEnabled: String(modes.SelfUseModeEnabled), DemoSiteEnabled: String(modes.DemoSiteEnabled) });
    })
    .catch((err: unknown) => {
      if (err instanceof BadRequestError) throw err;
      if (/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw new BadRequestError('系统已经初始化完成');
      throw err;
    });
  await app.options.afterWrite();
  await refreshSetup(app);
}
