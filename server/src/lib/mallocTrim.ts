/**
 * glibc's `malloc_trim(0)` from the optional native addon `@gateway/malloc-trim`
 * (server/native/malloc-trim): gives the whole free pages inside the malloc heap back to the OS.
 * Undefined when the addon is not installed (no compiler at `npm install`) or did not build; on
 * non-glibc platforms the addon's `trim()` just returns false.
 */
let loaded: { fn: (() => boolean) | undefined } | undefined;

export function mallocTrim(): (() => boolean) | undefined {
  if (!loaded) {
    let fn: (() => boolean) | undefined;
    try {
      // Required here, not at the top: optional, and only the idle GC needs it.
      const addon = require('@gateway/malloc-trim') as { trim?: unknown } | null; // eslint-disable-line @typescript-eslint/no-require-imports
      if (addon && typeof addon.trim === 'function') fn = addon.trim as () => boolean;
    } catch {
      fn = undefined;
    }
    loaded = { fn };
  }
  return loaded.fn;
}
