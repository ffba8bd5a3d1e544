// Datetime strings as Qdrant reads them (payload values, datetime ranges, datetime indexes):
// RFC 3339, also with a space instead of `T`, an offset without colon (`+0100`, `+01`), or no
// offset at all (then UTC); also `YYYY-MM-DD HH:MM` and a bare `YYYY-MM-DD`. Qdrant keeps
// datetimes as microseconds since the epoch, and so do we.

const WITH_SECONDS = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?: ?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?))?$/;
const MINUTES_ONLY = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Microseconds since 1970-01-01T00:00:00Z, or undefined when the text is not a datetime. */
export function parseDatetime(text: string): number | undefined {
  let m = WITH_SECONDS.exec(text);
  if (m) {
    const [, y, mo, d, h, mi, s, fraction, , sign, offH, offM] = m;
    const micros = fraction === undefined ? 0 : Number(fraction.slice(0, 6).padEnd(6, '0'));
    let offset = 0;
    if (sign !== undefined) {
      if (Number(offH) > 23 || Number(offM ?? 0) > 59) return undefined;
      offset = (sign === '-' ? -1 : 1) * (Number(offH) * 60 + Number(offM ?? 0));
    }
    return instant(+y, +mo, +d, +h, +mi, +s, micros, offset);
  }
  m = MINUTES_ONLY.exec(text);
  if (m) return instant(+m[1], +m[2], +m[3], +m[4], +m[5], 0, 0, 0);
  m = DATE_ONLY.exec(text);
  if (m) return instant(+m[1], +m[2], +m[3], 0, 0, 0, 0, 0);
  return undefined;
}

function instant(year: number, month: number, day: number, hour: number, minute: number, second: number, micros: number, offsetMinutes: number): number | undefined {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // Second 60 is a leap second: chrono accepts it and it lands on the next second's instant.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0..99 to 1900..1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offsetMinutes, second, 0);
  return date.getTime() * 1000 + micros;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
