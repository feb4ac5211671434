import type { Page } from 'playwright-core';
import type { Stack } from '../stack';

/** What a feature flow gets: a page logged in as root, the console URL, the stack (app + mock upstream). */
export interface FlowContext {
  page: Page;
  base: string;
  stack: Stack;
  admin: { username: string; password: string };
}

export interface Flow {
  name: string;
  /** Runs its own steps (lib.ts `step`), which count toward the suite's passed/failed. */
  run(ctx: FlowContext): Promise<void>;
}
