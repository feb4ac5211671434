import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full GC for tests that measure memory. The product gets `global.gc` from node's `--expose-gc`
 * (npm start's flags); jest's workers run without it, so tests turn the flag on here and take
 * `gc` from a fresh context.
 */
export function testGc(): () => void {
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') return existing as () => void;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
