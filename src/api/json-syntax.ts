// Describes why a body is not JSON the way serde_json (Qdrant's parser) words it, with its
// 1-based line and column (in bytes, as serde_json counts), e.g. "EOF while parsing a list at
// line 1 column 12". JSON.parse's own messages differ between engines and name no line, so the
// text is scanned again here, only after JSON.parse has failed or the text nests too deep.

/**
 * serde_json's recursion limit: it refuses the 128th `[` or `{` open at once, before reading
 * into it. This scan stops there too, so its own recursion is bounded whatever the text.
 */
export const MAX_JSON_NESTING = 128;

class SyntaxFault extends Error {}

const utf8 = new TextEncoder();

export function describeJsonError(text: string): string {
  let pos = 0;
  let depth = 0;
  const fail = (what: string, at = pos): never => {
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    const column = utf8.encode(before.slice(before.lastIndexOf('\n') + 1)).length + (at < text.length ? 1 : 0);
    throw new SyntaxFault(`${what} at line ${line} column ${column}`);
  };
  const skip = () => {
    while (pos < text.length && ' \t\n\r'.includes(text[pos])) pos++;
  };
  const eof = (what: string) => fail(`EOF while parsing ${what}`);

  const value = (): void => {
    skip();
    if (pos >= text.length) eof('a value');
    const c = text[pos];
    if (c === '{') return object();
    if (c === '[') return list();
    if (c === '"') return string();
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word[0], pos)) {
        for (let i = 0; i < word.length; i++, pos++) {
          if (pos >= text.length) eof('a value');
          if (text[pos] !== word[i]) fail('expected ident', pos);
        }
        return;
      }
    }
    fail('expected value', pos);
  };
  const string = (): void => {
    pos++;
    while (pos < text.length && text[pos] !== '"') {
      if (text[pos] === '\\') pos++;
      else if (text.charCodeAt(pos) < 0x20) fail('control character (\\u0000-\\u001F) found while parsing a string', pos);
      pos++;
    }
    if (pos >= text.length) eof('a string');
    pos++;
  };
  const number = (): void => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(pos));
    if (!m || m[0] === '-') fail('invalid number', pos);
    pos += m![0].length;
  };
  const sequence = (close: string, what: string, item: () => void): void => {
    if (++depth >= MAX_JSON_NESTING) fail('recursion limit exceeded', pos);
    pos++;
    skip();
    if (pos >= text.length) eof(what);
    if (text[pos] === close) { pos++; depth--; return; }
    for (;;) {
      item();
      skip();
      if (pos >= text.length) eof(what);
      if (text[pos] === close) { pos++; depth--; return; }
      if (text[pos] !== ',') fail(`expected \`,\` or \`${close}\``, pos);
      pos++;
    }
  };
  const list = () => sequence(']', 'a list', value);
  const object = () => sequence('}', 'an object', () => {
    skip();
    if (pos >= text.length) eof('an object');
    if (text[pos] !== '"') fail('key must be a string', pos);
    string();
    skip();
    if (pos >= text.length) eof('an object');
    if (text[pos] !== ':') fail('expected `:`', pos);
    pos++;
    value();
  });

  try {
    value();
    skip();
    if (pos < text.length) fail('trailing characters', pos);
    return 'invalid JSON';
  } catch (err) {
    if (err instanceof SyntaxFault) return err.message;
    throw err;
  }
}
