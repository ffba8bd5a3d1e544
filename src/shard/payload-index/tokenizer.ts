// A text index tokenizes with the shared text analysis (src/text/tokenizer.ts): Qdrant's
// tokenizers, ASCII folding, lowercasing, per-language and custom stopwords, Snowball stemming
// and token length limits, all as the index's parameters set them.

import { createTokenizer as createAnalyzer, type Tokenizer } from '../../text/tokenizer.js';
import type { TextIndexParams } from './schema.js';

export type { Tokenizer } from '../../text/tokenizer.js';

export function createTokenizer(params: TextIndexParams): Tokenizer {
  return createAnalyzer(params);
}
