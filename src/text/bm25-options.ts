// The options of Qdrant's `qdrant/bm25` model (Bm25Config in its REST schema), read from a
// Document's `options` object, and resolved as Qdrant resolves them
// (src/common/inference/bm25_inference.rs):
// - k 1.2, b 0.75, avg_len 256, tokenizer word, lowercase on, ascii_folding off by default;
// - `language` (default "english") picks the default stopword list and Snowball stemmer; a name
//   that is no language (Qdrant's documented legacy "none") leaves both off;
// - explicit `stopwords` replace the language's list, explicit `stemmer` its stemmer
//   (`{type: "none"}` turns stemming off).
// Keys Qdrant does not know are ignored, as serde ignores them. A value of the wrong shape fails
// as Qdrant's deserializer fails ("Wrong input: Invalid BM25 config: Error(...)", the serde
// message approximated), and k, b, avg_len out of range fail with its validation messages.

import { BadInput } from '../errors.js';
import { snowballLanguage, stopwordLanguage, SNOWBALL_LANGUAGES } from './languages.js';
import { rustDebugString, rustFloat } from './rust-format.js';
import type { StopwordsOption } from './stopwords.js';
import type { StemmerOption, TextAnalysisParams, TokenizerType } from './tokenizer.js';

export interface Bm25Params {
  k: number;
  b: number;
  avgLen: number;
  /** The text analysis with the language defaults applied. */
  analysis: TextAnalysisParams;
}

const TOKENIZERS: readonly TokenizerType[] = ['prefix', 'whitespace', 'word', 'multilingual'];
const DEFAULT_LANGUAGE = 'english';

/** Reads and validates a Document's options for the BM25 model (absent options: defaults). */
export function bm25Params(options: Readonly<Record<string, unknown>> | null | undefined): Bm25Params {
  const o = options ?? {};
  const k = number(o, 'k', 1.2);
  const b = number(o, 'b', 0.75);
  const avgLen = number(o, 'avg_len', 256);
  const tokenizer = o.tokenizer === undefined ? 'word' : variant(o.tokenizer, TOKENIZERS);
  const language = optional(o, 'language', 'a string', (v): v is string => typeof v === 'string') ?? DEFAULT_LANGUAGE;
  const lowercase = optional(o, 'lowercase', 'a boolean', isBoolean) ?? true;
  const asciiFolding = optional(o, 'ascii_folding', 'a boolean', isBoolean) ?? false;
  const minTokenLen = optionalSize(o, 'min_token_len');
  const maxTokenLen = optionalSize(o, 'max_token_len');
  const stopwords = o.stopwords === undefined || o.stopwords === null ? undefined : stopwordsOption(o.stopwords);
  const stemmer = o.stemmer === undefined || o.stemmer === null ? undefined : stemmerOption(o.stemmer);

  // Bm25Params::validate in Qdrant's bm25 crate, reported as bad input.
  if (k < 0) throw new BadInput(`BM25 k1 must be finite and >= 0, got ${rustFloat(k)}`);
  if (b < 0 || b > 1) throw new BadInput(`BM25 b must be finite and in [0.0, 1.0], got ${rustFloat(b)}`);
  if (avgLen <= 0) throw new BadInput(`BM25 avg_doc_len must be finite and > 0, got ${rustFloat(avgLen)}`);

  const defaultStemmer = snowballLanguage(language);
  const defaultStopwords = stopwordLanguage(language);
  return {
    k,
    b,
    avgLen,
    analysis: {
      tokenizer,
      lowercase,
      ascii_folding: asciiFolding,
      min_token_len: minTokenLen,
      max_token_len: maxTokenLen,
      stopwords: stopwords ?? defaultStopwords,
      stemmer: stemmer ?? (defaultStemmer === undefined ? undefined : { type: 'snowball', language: defaultStemmer }),
    },
  };
}

function deserializeError(message: string): BadInput {
  return new BadInput(`Invalid BM25 config: Error(${rustDebugString(message)}, line: 0, column: 0)`);
}

/** How serde names an unexpected JSON value in "invalid type" errors. */
function unexpected(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number') return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${rustFloat(value)}\``;
  if (typeof value === 'string') return `string ${rustDebugString(value)}`;
  return Array.isArray(value) ? 'sequence' : 'map';
}

const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';

function number(o: Readonly<Record<string, unknown>>, key: string, fallback: number): number {
  const value = o[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw deserializeError(`invalid type: ${unexpected(value)}, expected f64`);
  return value;
}

function optional<T>(o: Readonly<Record<string, unknown>>, key: string, expected: string, is: (v: unknown) => v is T): T | undefined {
  const value = o[key];
  if (value === undefined || value === null) return undefined;
  if (!is(value)) throw deserializeError(`invalid type: ${unexpected(value)}, expected ${expected}`);
  return value;
}

function optionalSize(o: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const value = o[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value < 0) throw deserializeError(`invalid value: integer \`${value}\`, expected usize`);
  if (typeof value !== 'number' || !Number.isInteger(value)) throw deserializeError(`invalid type: ${unexpected(value)}, expected usize`);
  return value;
}

function variant<T extends string>(value: unknown, names: readonly T[]): T {
  if (typeof value !== 'string') throw deserializeError(`invalid type: ${unexpected(value)}, expected string or map`);
  if (!(names as readonly string[]).includes(value)) {
    throw deserializeError(`unknown variant \`${value}\`, expected one of ${names.map((n) => `\`${n}\``).join(', ')}`);
  }
  return value as T;
}

/** Qdrant's StopwordsInterface: a language name, or {languages, custom}; untagged in serde. */
function stopwordsOption(value: unknown): StopwordsOption {
  const untagged = () => deserializeError('data did not match any variant of untagged enum StopwordsInterface');
  if (typeof value === 'string') {
    if (stopwordLanguage(value) === undefined) throw untagged();
    return value;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw untagged();
  const set = value as Record<string, unknown>;
  const strings = (field: unknown, valid: (s: string) => boolean): string[] | undefined => {
    if (field === undefined || field === null) return undefined;
    if (!Array.isArray(field) || !field.every((s): s is string => typeof s === 'string' && valid(s))) throw untagged();
    return field;
  };
  return {
    languages: strings(set.languages, (s) => stopwordLanguage(s) !== undefined),
    custom: strings(set.custom, () => true),
  };
}

/** Qdrant's StemmingAlgorithm: {type: "snowball", language} or {type: "none"}; untagged in serde. */
function stemmerOption(value: unknown): StemmerOption {
  const untagged = () => deserializeError('data did not match any variant of untagged enum StemmingAlgorithm');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw untagged();
  const algorithm = value as Record<string, unknown>;
  if (algorithm.type === 'none') return { type: 'none' };
  if (algorithm.type === 'snowball' && typeof algorithm.language === 'string') {
    const language = snowballLanguage(algorithm.language);
    if (language !== undefined && (SNOWBALL_LANGUAGES as readonly string[]).includes(language)) return { type: 'snowball', language };
  }
  throw untagged();
}
