type Tree = Record<string, unknown>;

function plain(v: unknown): v is Tree {
  return !!v && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** Deep merge of plain objects (later wins); arrays, functions and scalars are replaced. */
export function deepMerge<T = Tree>(...trees: unknown[]): T {
  const out: Tree = {};
  for (const t of trees) {
    if (!plain(t)) continue;
    for (const [k, v] of Object.entries(t)) {
      const prev = out[k];
      out[k] = plain(v) && plain(prev) ? deepMerge(prev, v) : v;
    }
  }
  return out as T;
}
