/**
 * A constant table that text from outside is looked up in: a file's extension, a filter's key, an XML entity, a
 * bundle's digest name. It has no prototype, so `constructor`, `toString` or `__proto__` find nothing in it (with
 * `[]` or `in`), where a plain object literal would answer them with what every object inherits.
 */
export function lookupTable<T extends object>(entries: T): Readonly<T> {
  return Object.freeze(Object.assign(Object.create(null) as T, entries));
}
