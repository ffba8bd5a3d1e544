// Exact values of the integer literals in a request body that JSON.parse rounded. Qdrant's ids go
// up to 2^64-1, and a double holds integers exactly only up to 2^53. Bodies are parsed by
// JSON.parse alone, as fast as ever; the body's text is kept beside it (a WeakMap entry), and
// only when validation meets a number in an id position that may have been rounded is the text
// scanned once more, for the digits of its long integer literals by their place in the body. No
// second object tree is built and nothing else of the body is looked at again: payload numbers,
// limits and vectors stay the doubles JSON.parse made (as serde_json makes them).
//
// Places are JSON pointers as Ajv writes them in `instancePath` ("/points/0/id"), so the id
// keyword finds a literal from where it stands in the data.

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

/** Fewer digits than this always fit a double exactly (2^53 has 16). */
const LONG_DIGITS = 16;

const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
const STRING_END = /(?:[^"\\]|\\.)*"/y;

/** One open object or list on the way to the current value. */
interface Level {
  list: boolean;
  /** The current member's name (escaped for a pointer) or item index. */
  step: string;
  index: number;
  /** In an object: the next string is a member name. */
  awaitingName: boolean;
}

/**
 * The integer literals of 16 digits or more in `text` (valid JSON: JSON.parse has read it) by
 * their JSON pointer. A name given twice keeps its last value, as JSON.parse does.
 */
export function longIntegerLiterals(text: string): Map<string, bigint> {
  const found = new Map<string, bigint>();
  const levels: Level[] = [];
  let pos = 0;
  while (pos < text.length) {
    const c = text[pos];
    const level = levels[levels.length - 1] as Level | undefined;
    if (c === '{' || c === '[') {
      const list = c === '[';
      levels.push({ list, step: list ? '0' : '', index: 0, awaitingName: !list });
      pos++;
    } else if (c === '}' || c === ']') {
      levels.pop();
      pos++;
    } else if (c === ',') {
      if (level?.list) level.step = String(++level.index);
      else if (level) level.awaitingName = true;
      pos++;
    } else if (c === '"') {
      STRING_END.lastIndex = pos + 1;
      STRING_END.exec(text);
      const end = STRING_END.lastIndex;
      if (level && !level.list && level.awaitingName) {
        level.step = pointerStep(JSON.parse(text.slice(pos, end)) as string);
        level.awaitingName = false;
      }
      pos = end;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = pos;
      const literal = NUMBER.exec(text) as RegExpExecArray;
      const isInteger = literal[1] === undefined && literal[2] === undefined;
      const digits = literal[0].length - (c === '-' ? 1 : 0);
      if (isInteger && digits >= LONG_DIGITS) found.set(pointerOf(levels), BigInt(literal[0]));
      pos = NUMBER.lastIndex;
    } else {
      pos++;
    }
  }
  return found;
}

function pointerOf(levels: readonly Level[]): string {
  let pointer = '';
  for (const level of levels) pointer += `/${level.step}`;
  return pointer;
}

/** A member name as one step of a JSON pointer (RFC 6901), as Ajv escapes it. */
function pointerStep(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
