// The long integer literals of a JSON text, by where they stand. A double holds integers exactly
// only up to 2^53, so JSON.parse rounds an integer literal of 16 digits or more; serde_json keeps
// it as i64 or u64. One pass over the text recovers the digits JSON.parse rounded, for the places
// that must be exact: point ids and payload integers in request bodies (src/api/exact-integers.ts)
// and payloads read back from point records (src/shard/point-codec.ts).
//
// Places are JSON pointers as Ajv writes them in `instancePath` ("/points/0/id").

/** Fewer digits than this always fit a double exactly (2^53 has 16). */
const LONG_DIGITS = 16;

const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;
const STRING_END = /(?:[^"\\]|\\.)*"/y;
const LONG_RUN = new RegExp(`\\d{${LONG_DIGITS}}`);

/** Whether `text` may hold a long integer literal (a quick test: it has a run of that many digits). */
export function mayHoldLongIntegers(text: string): boolean {
  return LONG_RUN.test(text);
}

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
export function pointerStep(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
