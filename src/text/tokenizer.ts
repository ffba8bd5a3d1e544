// Text tokenizers after Qdrant's (lib/segment full_text_index/tokenizers), shared by full-text
// payload indexes and BM25 inference:
// - word: split at every character that is not alphanumeric (Unicode);
// - whitespace: split at Unicode white space;
// - prefix: split as word; a stored word becomes its prefixes of min_token_len..max_token_len
//   characters (the word itself when shorter), a query word is cut to max_token_len characters;
// - multilingual: Qdrant segments with charabia (dictionary-based for CJK, Thai...); Quiver splits
//   as word, which agrees for space-separated scripts only.
// Each token then goes through Qdrant's order of steps: ASCII folding if asked (Lucene's
// mapping), lowercasing (default on), dropped if a stopword (per-language lists and custom words,
// compared after lowercasing), stemmed if a stemmer is set (Snowball), and dropped when shorter
// than min_token_len or longer than max_token_len characters (counted after stemming).
// Prefix queries skip the stopword check, since a stopword may begin a longer word.

import { asciiFold } from './ascii-fold.js';
import { snowballLanguage } from './languages.js';
import { snowballStemmer, type Stem } from './stemmer.js';
import { stopwordSet, type StopwordsOption } from './stopwords.js';

export type TokenizerType = 'prefix' | 'whitespace' | 'word' | 'multilingual';

/** Qdrant's stemmer option: a Snowball stemmer for a language, or explicitly none. */
export type StemmerOption = { type: 'snowball'; language: string } | { type: 'none' } | null | undefined;

/** The analysis options of a text index (and of BM25 once its language defaults are applied). */
export interface TextAnalysisParams {
  tokenizer?: TokenizerType | null;
  min_token_len?: number | null;
  max_token_len?: number | null;
  lowercase?: boolean | null;
  ascii_folding?: boolean | null;
  stopwords?: StopwordsOption;
  stemmer?: StemmerOption;
}

export interface Tokenizer {
  /** Tokens of a stored string, in order. */
  document(text: string): string[];
  /** Tokens of a query string. */
  query(text: string): string[];
}

const NOT_ALPHANUMERIC = /[^\p{Alphabetic}\p{Nd}\p{Nl}\p{No}]+/u;
const WHITE_SPACE = /\p{White_Space}+/u;

/** The stemmer an option asks for; undefined for none (or a language with no stemmer). */
export function stemmerOf(option: StemmerOption): Stem | undefined {
  if (option === null || option === undefined || option.type !== 'snowball') return undefined;
  const language = snowballLanguage(option.language);
  return language === undefined ? undefined : snowballStemmer(language);
}

export function createTokenizer(params: TextAnalysisParams): Tokenizer {
  const lowercase = params.lowercase ?? true;
  const fold = params.ascii_folding ?? false;
  const min = params.min_token_len ?? undefined;
  const max = params.max_token_len ?? undefined;
  const stopwords = stopwordSet(params.stopwords, lowercase);
  const stem = stemmerOf(params.stemmer);

  /** Folding, lowercasing and stemming: what every token goes through. */
  const normalize = (raw: string): string => {
    const folded = fold ? asciiFold(raw) : raw;
    return lowercase ? folded.toLowerCase() : folded;
  };
  /** A token as stored, or undefined when it is dropped. */
  const process = (raw: string, checkMax: boolean): string | undefined => {
    if (raw === '') return undefined;
    const normal = normalize(raw);
    if (stopwords.has(normal)) return undefined;
    const token = stem === undefined ? normal : stem(normal);
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
        query(text) {
          const out: string[] = [];
          for (const raw of text.split(NOT_ALPHANUMERIC)) {
            if (raw === '') continue;
            const normal = normalize(raw);
            const chars = [...(stem === undefined ? normal : stem(normal))];
            if (min !== undefined && chars.length < min) continue;
            out.push(max === undefined ? chars.join('') : chars.slice(0, max).join(''));
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
