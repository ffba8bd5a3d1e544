// Reading and writing objects by keys that come from requests (payload keys, vector and metadata
// names). Any string is a key, "__proto__" and "toString" included: these read own fields only
// and write fields, never reaching or replacing an object's prototype.

/** The value of `object`'s own field `key`, if it has one. */
export function ownField<T>(object: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Sets field `key` of `object` (an assignment to "__proto__" would set the prototype instead). */
export function setOwnField<T>(object: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
