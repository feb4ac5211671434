import type { AppContext } from '../context';
import { BadRequestError } from '../lib/errors';
import { upsertOptions } from '../repositories/options';
import { recordSetup, rootExists, setupRecorded } from '../repositories/setup';
import { ROLE, type UserRow } from '../repositories/users';
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

/**
 * Sign-ups (password or a login provider) wait for the first-run setup: before it the first
 * account would be an ordinary user on a gateway nobody administers.
 */
export async function assertSetupDone(app: AppContext): Promise<void> {
  if (!(await isSetupDone(app))) throw new BadRequestError('setup.not_done');
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

/**
 * Root's starting balance (as new-api gives it): 100 000 000 units, $200 at the default 500 000
 * units per dollar — enough for the operator's first calls with a fresh token, which a balance of
 * 0 would refuse ("用户额度不足") with nothing saying why.
 */
export const ROOT_START_QUOTA = 100_000_000;

/**
 * The first-run setup: creates the root user (unless one exists) with its starting balance and
 * records the usage mode, once. Answers the root user it created (undefined when one existed).
 */
export async function runSetup(app: AppContext, input: SetupInput): Promise<UserRow | undefined> {
  if (await refreshSetup(app)) throw new BadRequestError('setup.already_done');
  const hasRoot = await rootExists(app.knex);
  const modes = input.modes();
  if (modes.SelfUseModeEnabled && modes.DemoSiteEnabled) throw new BadRequestError('setup.modes_conflict');
  const created = await app.knex
    .transaction(async (trx) => {
      await recordSetup(trx, app.config.version);
      let root: UserRow | undefined;
      if (!hasRoot) {
        const account = input.rootAccount();
        root = await createAccount(app, { username: account.username, password: account.password, role: ROLE.root, display_name: 'Root User' }, trx);
        await trx('users').where({ id: root.id }).update({ quota: ROOT_START_QUOTA });
        root.quota = ROOT_START_QUOTA;
      }
      await upsertOptions(trx, { SelfUseModeEnabled: String(modes.SelfUseModeEnabled), DemoSiteEnabled: String(modes.DemoSiteEnabled) });
      return root;
    })
    .catch((err: unknown) => {
      if (err instanceof BadRequestError) throw err;
      if (/unique|duplicate|constraint/i.test(String((err as Error)?.message))) throw new BadRequestError('setup.already_done');
      throw err;
    });
  await app.options.afterWrite();
  await refreshSetup(app);
  return created;
}
