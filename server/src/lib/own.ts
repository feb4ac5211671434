/**
 * Lookups by a name someone typed (a group, a model, an option, a payment method …) in a plain
 * object: only the object's own properties count. `'constructor' in {}` is true and
 * `({}).toString` is a function, so without this a group named `__proto__` or `constructor`
 * passes a check, and a model named `toString` finds a "mapping".
 */

/** `map[key]` when `key` is one of map's own properties, else undefined (never an inherited member). */
export function own<V>(map: Readonly<Record<string, V>> | null | undefined, key: string): V | undefined {
  return map != null && Object.hasOwn(map, key) ? map[key] : undefined;
}

/** Whether `key` is one of map's own properties. */
export function hasOwn(map: object | null | undefined, key: string): boolean {
  return map != null && Object.hasOwn(map, key);
}

/** A name every plain object already has (`__proto__`, `constructor`, `toString`, `hasOwnProperty` …). */
export function isPrototypeName(name: string): boolean {
  return Object.hasOwn(Object.prototype, name);
}

/** An empty map without a prototype: any name, `__proto__` included, is an ordinary key. */
export function emptyMap<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}
