// Exact values of the integer literals in a request body that JSON.parse rounded. Qdrant's ids go
// up to 2^64-1 and its payload integers are i64/u64, and a double holds integers exactly only up
// to 2^53. Bodies are parsed by JSON.parse alone, as fast as ever; the body's text is kept beside
// it (a WeakMap entry), and only when validation meets a number that may have been rounded where
// Qdrant keeps integers exactly (an id, a payload, an integer match value) is the text scanned once
// more, for the digits of its long integer literals by their place in the body. No second object
// tree is built: limits, vectors and floats stay the doubles JSON.parse made (as serde_json makes
// them).
//
// Places are JSON pointers as Ajv writes them in `instancePath` ("/points/0/id"), so the id and
// integer keywords (point-id-keyword.ts, exact-integer-keywords.ts) find a literal from where it
// stands in the data.

import { longIntegerLiterals } from '../json/integer-literals.js';

const sources = new WeakMap<object, string>();
const scans = new WeakMap<object, ReadonlyMap<string, bigint>>();

/** Keeps the text `body` was parsed from, for exactIntegerAt. */
export function rememberSource(body: unknown, text: string): void {
  if (typeof body === 'object' && body !== null) sources.set(body, text);
}

/**
 * The exact value of the integer literal at `place` in the body `root` was parsed from, if the
 * text is known and holds a long integer literal (16 digits or more) there. The text is scanned
 * on the first call for a body, and only then.
 */
export function exactIntegerAt(root: unknown, place: string): bigint | undefined {
  if (typeof root !== 'object' || root === null) return undefined;
  let scan = scans.get(root);
  if (scan === undefined) {
    const text = sources.get(root);
    if (text === undefined) return undefined;
    scan = longIntegerLiterals(text);
    scans.set(root, scan);
  }
  return scan.get(place);
}
