// ASCII folding as Qdrant does it: Lucene's ASCIIFoldingFilter mapping (Qdrant's
// tokenizers/ascii_folding.rs is a translation of it), here through fold-to-ascii, a port of the
// same Lucene filter. Characters without a mapping are kept.

import { createRequire } from 'node:module';

interface Folder {
  foldMaintaining(text: string): string;
}

const folder = createRequire(import.meta.url)('fold-to-ascii') as Folder;

const NON_ASCII = /[^\x00-\x7f]/;

export function asciiFold(text: string): string {
  return NON_ASCII.test(text) ? folder.foldMaintaining(text) : text;
}
