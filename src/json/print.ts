// JSON text of a response or a stored record. Point ids and payload integers past 2^53 are
// bigints (see PointId, src/json/integers.ts), which JSON.stringify refuses and which must be
// printed as bare integers, 18446744073709551615, as Qdrant prints them. JSON.stringify does all
// the work for every value without one; only when it refuses a bigint is the value printed again
// here, level by level, each subtree that holds no bigint still by JSON.stringify (so a
// response's vectors and payloads keep native speed).

/** The JSON text of `value`, with each bigint written as a JSON integer. */
export function printJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!isBigintRefusal(err)) throw err;
    return printExact(value, '') ?? 'null';
  }
}

function isBigintRefusal(err: unknown): boolean {
  return err instanceof TypeError && err.message.includes('BigInt');
}

/** As JSON.stringify would print `value` as the member `key` (undefined: left out), bigints as integers. */
function printExact(value: unknown, key: string): string | undefined {
  let v = value;
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (typeof v === 'bigint') return v.toString();
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  try {
    return JSON.stringify(v);
  } catch (err) {
    if (!isBigintRefusal(err)) throw err;
  }
  if (Array.isArray(v)) {
    return `[${v.map((item, i) => printExact(item, String(i)) ?? 'null').join(',')}]`;
  }
  const members: string[] = [];
  for (const [name, member] of Object.entries(v)) {
    const printed = printExact(member, name);
    if (printed !== undefined) members.push(`${JSON.stringify(name)}:${printed}`);
  }
  return `{${members.join(',')}}`;
}
