/**
 * Clocks for tests that wait on the product's own time (test/README.md: which tests fake what).
 *
 * The real `setTimeout` and `Date.now` are taken when this module loads, before any test installs
 * jest's fake timers: `waitFor` polls real I/O (a socket, a database, another app's pub/sub) on
 * the real clock whatever the test faked.
 */
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;

/** What jest's modern fake timers can replace. */
const FAKEABLE = [
  'Date',
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;
type Fakeable = (typeof FAKEABLE)[number];

/**
 * Jest's modern fake timers for `apis` only; everything else stays real (sockets, database
 * drivers and pools keep their own timers). Undo with `jest.useRealTimers()`.
 */
export function fakeOnly(apis: Fakeable[], now: number = realNow()): void {
  jest.useFakeTimers({ doNotFake: FAKEABLE.filter((a) => !apis.includes(a)), now });
}

/**
 * Fakes the wall clock only: `Date.now()` stands still at `now` until the test moves it
 * (`jest.setSystemTime`, `jest.advanceTimersByTime`). Timers, `setImmediate`, `nextTick`,
 * `performance` and `hrtime` stay real, so sockets, database drivers and the app's own timers run
 * as usual. For code that compares `Date.now()` with a deadline it stored (breaker cool-downs,
 * token lifetimes, dashboard boundaries). Undo with `jest.useRealTimers()`.
 */
export function fakeWallClock(now: number = realNow()): void {
  fakeOnly(['Date'], now);
}

/** Polls `check` on the real clock every `everyMs` until it holds; throws after `ms`. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000, everyMs = 10): Promise<void> {
  const end = realNow() + ms;
  while (!(await check())) {
    if (realNow() > end) throw new Error(`waitFor: not within ${ms} ms`);
    await new Promise((r) => realSetTimeout(r, everyMs));
  }
}
