/**
 * The optional native addon `@gateway/release-memory` (server/native/release-memory), for the
 * idle GC (idleGc.ts):
 *  - `lowMemoryNotification()`: V8's memory-reducing full collection, which also compacts the old
 *    generation and shrinks the young one (global.gc() does neither);
 *  - `trim()`: glibc's `malloc_trim(0)`, gives the whole free pages inside the malloc heap back to
 *    the OS; returns false on other C libraries.
 * Undefined when the addon is not installed (no compiler at `npm install`), did not build, or was
 * built for another Node version.
 */
export interface NativeMemory {
  lowMemoryNotification(): void;
  trim(): boolean;
}

/** undefined: not looked up yet; null: not available. */
let addon: NativeMemory | null | undefined;

export function nativeMemory(): NativeMemory | undefined {
  if (addon === undefined) {
    try {
      // Required here, not at the top: optional, and only the idle GC needs it.
      const m = require('@gateway/release-memory') as Partial<NativeMemory> | null; // eslint-disable-line @typescript-eslint/no-require-imports
      addon = typeof m?.trim === 'function' && typeof m.lowMemoryNotification === 'function' ? (m as NativeMemory) : null;
    } catch {
      addon = null;
    }
  }
  return addon ?? undefined;
}
