// Numbers and strings in Qdrant's error messages are printed by Rust: f64 `Display` never uses
// exponent notation ("1e21" prints as "1000000000000000000000"), and `Debug` quotes a string
// with backslash escapes. These helpers print JavaScript values the same way.

/** A number as Rust's `{}` prints an f64. */
export function rustFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  const [, sign, lead, fraction = '', exponentText] = match;
  const digits = lead + fraction;
  const exponent = Number(exponentText);
  if (exponent >= 0) return sign + digits.padEnd(exponent + 1, '0');
  return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
}

/** A string as Rust's `{:?}` prints it. */
export function rustDebugString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r')}"`;
}

/**
 * A number as Rust's `{}` prints an f32: the shortest decimal that reads back as the same f32
 * (so 240 / 2^20 prints as 0.00022888184, not as the f64's 0.0002288818359375).
 */
export function rustF32(value: number): string {
  const single = Math.fround(value);
  if (!Number.isFinite(single)) return rustFloat(single);
  for (let digits = 1; digits < 17; digits++) {
    const shortest = Number(single.toPrecision(digits));
    if (Math.fround(shortest) === single) return rustFloat(shortest);
  }
  return rustFloat(single);
}
