// Qdrant's rules for collection names (src/actix/api/mod.rs, lib/common/common/src/validation.rs):
// 1 to 255 characters everywhere; creating a collection also forbids the characters no file
// system can hold in a name (`validate_collection_name`); every other endpoint only forbids `/`
// and NUL (`validate_collection_name_legacy`, so that collections named before the stricter
// rule stay reachable). Since Qdrant 1.19.1 `.` and `..` are refused everywhere: a name is a
// directory component on disk. Each broken rule is worded as Qdrant's validator reports it.

export const MAX_NAME_LENGTH = 255;

/** validate_collection_name's characters, in the order it looks for them. */
const FORBIDDEN_WHEN_CREATING = ['<', '>', ':', '"', '/', '\\', '|', '?', '*', '\0', '\u001f'];
/** validate_collection_name_legacy's characters. */
const FORBIDDEN_ALWAYS = ['/', '\0'];

/** What the rules apply to: a name that creates something, or one that only refers to it. */
export type NameUse = 'create' | 'refer';

/** The broken rules of `name`, each as Qdrant's message; empty when the name is valid. */
export function nameViolations(name: string, use: NameUse, kind = 'collection name'): string[] {
  const violations: string[] = [];
  // The validator crate counts characters (code points), not bytes.
  const length = [...name].length;
  if (length < 1 || length > MAX_NAME_LENGTH) {
    violations.push(`value ${JSON.stringify(name)} invalid, must be from 1 to ${MAX_NAME_LENGTH} characters`);
  }
  const forbidden = (use === 'create' ? FORBIDDEN_WHEN_CREATING : FORBIDDEN_ALWAYS).find((c) => name.includes(c));
  if (forbidden !== undefined) violations.push(`${kind} cannot contain "${forbidden}" char`);
  if (name === '.' || name === '..') violations.push(`${kind} cannot be "${name}"`);
  return violations;
}
