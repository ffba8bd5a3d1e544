// UUIDs in the forms Qdrant's uuid crate parses: hyphenated, 32 bare hex digits, braced `{...}`
// and `urn:uuid:...` (that prefix in lowercase only), hex digits in either case. Inside Quiver
// they are always canonical: lowercase and hyphenated.

const H8 = '([0-9a-fA-F]{8})';
const H4 = '([0-9a-fA-F]{4})';
const H12 = '([0-9a-fA-F]{12})';
const HYPHENATED = `${H8}-${H4}-${H4}-${H4}-${H12}`;
const FORMS = [HYPHENATED, `${H8}${H4}${H4}${H4}${H12}`, `\\{${HYPHENATED}\\}`, `urn:uuid:${HYPHENATED}`];
const PARSERS = FORMS.map((form) => new RegExp(`^${form}$`));

/** JSON-schema pattern accepting exactly the forms above. */
export const UUID_PATTERN = `^(?:${FORMS.join('|')})$`;

/** The canonical form of a UUID, or undefined when `text` is none of the accepted forms. */
export function canonicalUuid(text: string): string | undefined {
  for (const parser of PARSERS) {
    const m = parser.exec(text);
    if (m) return m.slice(1).join('-').toLowerCase();
  }
  return undefined;
}

/** The 16 bytes of a canonical UUID in RFC 4122 order. */
export function uuidBytes(canonical: string): Uint8Array {
  const hex = canonical.replaceAll('-', '');
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}
