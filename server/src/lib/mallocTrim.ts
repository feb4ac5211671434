/**
 * glibc's `malloc_trim(0)` from the optional native addon `@gateway/malloc-trim`
 * (server/native/malloc-trim): gives the whole free pages inside the malloc heap back to the OS.
 * Undefined when the addon is not installed (no compiler at `npm install`) or did not build; on
 * non-glibc platforms the addon's `trim()` just returns false.
 */
/** undefined: not looked up yet; null: not available. */
let trimFn: (() => boolean) | null | undefined;

export function mallocTrim(): (() => boolean) | undefined {
  if (trimFn === undefined) {
    try {
      // Required here, not at the top: optional, and only the idle GC needs it.
      const addon = require('@gateway/malloc-trim') as { trim?: unknown } | null; // eslint-disable-line @typescript-eslint/no-require-imports
      trimFn = typeof addon?.trim === 'function' ? (addon.trim as () => boolean) : null;
    } catch {
      trimFn = null;
    }
  }
  return trimFn ?? undefined;
}
