import type { Knex } from 'knex';
import type { AppConfig } from './config';
import type { KV } from './cache/kv';
import type { Db } from './db/knex';
import type { Logger } from './lib/logger';
import type { OptionService } from './services/options';

/**
 * What every route, service and background job gets: config, database, shared KV, logger,
 * options. Services keep their per-app singletons (caches, batchers) through `memo`, so adding a
 * service never means editing the app factory.
 */
export interface AppContext {
  readonly config: AppConfig;
  readonly db: Db;
  readonly knex: Knex;
  readonly kv: KV;
  readonly log: Logger;
  readonly options: OptionService;
  /** Epoch seconds when this app started. */
  readonly startTime: number;
  /** One instance per app of whatever `factory` builds, created on first use. */
  memo<T>(key: string, factory: () => T): T;
  /** Runs on close (flush batches, stop timers); in reverse order of registration. */
  onClose(fn: () => Promise<void> | void): void;
}
