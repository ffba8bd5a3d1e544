// Request bodies are read as JSON the way Qdrant's parser (serde_json) reads them, including its
// recursion limit: the 128th `[` or `{` open at once is refused, e.g. "recursion limit exceeded
// at line 1 column 128". The nesting is measured on the text, before anything is parsed into
// objects, so no body (a million levels deep included) reaches a recursive parser or the code
// that walks parsed values (filters, prefetches, payloads) deeper than serde_json would let it.

import { FormatError } from '../errors.js';
import { rememberSource } from './exact-integers.js';
import { describeJsonError, MAX_JSON_NESTING } from './json-syntax.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_LIST = 0x5b;
const OPEN_OBJECT = 0x7b;

/** The characters that can change the nesting: brackets, and quotes (brackets inside strings do not count). */
const STRUCTURAL = /["[\]{}]/g;

/**
 * Whether `text` ever has MAX_JSON_NESTING brackets open at once. One pass, no recursion; the
 * regular expression jumps over numbers and other text natively, which matters because this runs
 * on every body before it is parsed (vectors are mostly digits).
 */
export function exceedsNesting(text: string): boolean {
  let depth = 0;
  STRUCTURAL.lastIndex = 0;
  for (let found = STRUCTURAL.exec(text); found !== null; found = STRUCTURAL.exec(text)) {
    const c = text.charCodeAt(found.index);
    if (c === QUOTE) {
      STRUCTURAL.lastIndex = closingQuote(text, found.index) + 1;
    } else if (c === OPEN_LIST || c === OPEN_OBJECT) {
      if (++depth >= MAX_JSON_NESTING) return true;
    } else {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string opened at `open` (the text's end if none does). */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * Whether `text` has MAX_JSON_NESTING opening brackets at all, wherever they stand (inside strings
 * too): the nesting can only reach the limit if it does. Counted by indexOf, which scans natively
 * and far faster than the structural scan, so a body with few brackets (a query: its vector is
 * one list of numbers) skips that scan.
 */
function mayReachNesting(text: string): boolean {
  let opened = 0;
  for (const bracket of ['[', '{']) {
    for (let at = text.indexOf(bracket); at >= 0; at = text.indexOf(bracket, at + 1)) {
      if (++opened >= MAX_JSON_NESTING) return true;
    }
  }
  return false;
}

/**
 * The body as a JSON value (undefined when empty); FormatError with serde_json's message otherwise.
 * Its text is kept beside it, for the exact value of an id past 2^53 (exact-integers.ts).
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return undefined;
  // Too deep for serde_json: the syntax scan (itself depth-limited) finds where it stops, at the
  // limit or at a syntax error before it.
  if (!mayReachNesting(text) || !exceedsNesting(text)) {
    try {
      const body: unknown = JSON.parse(text);
      rememberSource(body, text);
      return body;
    } catch {
      // described below
    }
  }
  throw new FormatError(`Format error in JSON body: ${describeJsonError(text)}`);
}
