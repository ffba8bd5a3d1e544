// Text index tokenizers, after Qdrant's (lib/segment full_text_index/tokenizers):
// - word: split at every character that is not alphanumeric (Unicode);
// - whitespace: split at Unicode white space;
// - prefix: split as word; a stored word becomes its prefixes of min_token_len..max_token_len
//   characters (the word itself when shorter), a query word is cut to max_token_len characters;
// - multilingual: Qdrant segments with charabia (dictionary-based for CJK, Thai...); Quiver splits
//   as word, which agrees for space-separated scripts only.
// Each token is then ASCII-folded if asked (approximated here: Unicode decomposition without the
// combining marks, plus a few letters that do not decompose), lowercased (default on), dropped
// if a stopword (only `custom` stopwords are applied; Qdrant's per-language lists are not
// included) and dropped when shorter than min_token_len or longer than max_token_len characters.
// Stemming (`stemmer`) is not applied.

import type { TextIndexParams } from './schema.js';

export interface Tokenizer {
  /** Tokens of a stored string, in order. */
  document(text: string): string[];
  /** Tokens of a query string. */
  query(text: string): string[];
}

const NOT_ALPHANUMERIC = /[^\p{Alphabetic}\p{Nd}\p{Nl}\p{No}]+/u;
const WHITE_SPACE = /\p{White_Space}+/u;

export function createTokenizer(params: TextIndexParams): Tokenizer {
  const lowercase = params.lowercase ?? true;
  const fold = params.ascii_folding ?? false;
  const min = params.min_token_len ?? undefined;
  const max = params.max_token_len ?? undefined;
  const custom = typeof params.stopwords === 'object' && params.stopwords !== null ? params.stopwords.custom ?? [] : [];
  const stopwords = new Set(custom.map((w) => (lowercase ? w.toLowerCase() : w)));

  const normalize = (token: string): string => {
    const folded = fold ? asciiFold(token) : token;
    return lowercase ? folded.toLowerCase() : folded;
  };
  /** A token as stored, or undefined when it is dropped. */
  const process = (raw: string, checkMax: boolean): string | undefined => {
    if (raw === '') return undefined;
    const token = normalize(raw);
    if (stopwords.has(token)) return undefined;
    const chars = [...token].length;
    if ((min !== undefined && chars < min) || (checkMax && max !== undefined && chars > max)) return undefined;
    return token;
  };
  const plain = (separator: RegExp) => (text: string): string[] => {
    const out: string[] = [];
    for (const raw of text.split(separator)) {
      const token = process(raw, true);
      if (token !== undefined) out.push(token);
    }
    return out;
  };

  switch (params.tokenizer ?? 'word') {
    case 'whitespace': {
      const split = plain(WHITE_SPACE);
      return { document: split, query: split };
    }
    case 'prefix':
      return {
        document(text) {
          const out: string[] = [];
          for (const raw of text.split(NOT_ALPHANUMERIC)) {
            const word = process(raw, false);
            if (word === undefined) continue;
            const chars = [...word];
            for (let n = min ?? 1; n <= (max ?? Infinity); n++) {
              if (chars.length <= n) {
                out.push(word);
                break;
              }
              out.push(chars.slice(0, n).join(''));
            }
          }
          return out;
        },
        // Query words are not checked against stopwords: a stopword may begin a longer word.
        query(text) {
          const out: string[] = [];
          for (const raw of text.split(NOT_ALPHANUMERIC)) {
            if (raw === '') continue;
            const word = normalize(raw);
            const chars = [...word];
            if (min !== undefined && chars.length < min) continue;
            out.push(max === undefined ? word : chars.slice(0, max).join(''));
          }
          return out;
        },
      };
    default: {
      const split = plain(NOT_ALPHANUMERIC);
      return { document: split, query: split };
    }
  }
}

const UNDECOMPOSABLE: Record<string, string> = {
  ß: 'ss', Æ: 'AE', æ: 'ae', Ø: 'O', ø: 'o', Œ: 'OE', œ: 'oe', Ð: 'D', ð: 'd', Þ: 'TH', þ: 'th', Ł: 'L', ł: 'l', Đ: 'D', đ: 'd', ı: 'i',
};

function asciiFold(token: string): string {
  return token.normalize('NFKD').replace(/\p{Mn}/gu, '').replace(/[ßÆæØøŒœÐðÞþŁłĐđı]/g, (c) => UNDECOMPOSABLE[c]);
}
