import { readVariable } from '../../../config/environment';

/**
 * The optional native addon `@gateway/native` (server/native/addon). Each helper is undefined when
 * the addon is not installed (no compiler at `npm install`), did not build, was built for another
 * Node version, or is switched off (`GATEWAY_NATIVE=off`); callers then do without it.
 */
export interface NativeMemory {
  /** V8's memory-reducing full collection, which also compacts the old generation and shrinks the young one (global.gc() does neither). */
  lowMemoryNotification(): void;
  /** glibc's `malloc_trim(0)`: gives the whole free pages inside the malloc heap back to the OS; false on other C libraries. */
  trim(): boolean;
}

/** Accepts up to `max` connections waiting on a listen socket, without blocking; their fds. Linux only ([] elsewhere). */
export type AcceptPending = (listenFd: number, max: number) => number[];

interface Addon extends NativeMemory {
  acceptPending: AcceptPending;
}

/** undefined: not looked up yet; null: not available. */
let addon: Partial<Addon> | null | undefined;

function load(): Partial<Addon> | null {
  if (addon === undefined) {
    if (readVariable('GATEWAY_NATIVE') === 'off') return (addon = null);
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- required lazily: it is optional and may be missing
      addon = (require('@gateway/native') as Partial<Addon> | null) ?? null;
    } catch {
      addon = null;
    }
  }
  return addon;
}

/** For the idle GC (idleGc.ts). */
export function nativeMemory(): NativeMemory | undefined {
  const m = load();
  return typeof m?.trim === 'function' && typeof m.lowMemoryNotification === 'function' ? (m as NativeMemory) : undefined;
}

/** For the HTTP listener (httpServer.ts). */
export function nativeAcceptPending(): AcceptPending | undefined {
  const m = load();
  return typeof m?.acceptPending === 'function' ? m.acceptPending : undefined;
}

/** Whether the addon loaded (false when absent or switched off): logged at start. */
export function nativeLoaded(): boolean {
  return load() !== null;
}
