// Snowball stemmers for Qdrant's stemmer languages (Qdrant uses the rust-stemmers crate).
// snowball-stemmers (a port of the Snowball project's generated stemmers) serves every language
// but Greek, which it lacks; Greek comes from @orama/stemmers, also Snowball-generated.
// Stemmers expect lowercased input, as Qdrant's pipeline gives them (lowercase runs first).

// A named import: the package marks itself __esModule without a default export, so a default
// import is undefined wherever it is loaded as CommonJS (the shard workers, through tsx).
import { newStemmer } from 'snowball-stemmers';
import { stemmer as greekStemmer } from '@orama/stemmers/greek';
import type { SnowballLanguage } from './languages.js';

export type Stem = (word: string) => string;

const cache = new Map<SnowballLanguage, Stem>();

export function snowballStemmer(language: SnowballLanguage): Stem {
  let stem = cache.get(language);
  if (stem === undefined) {
    if (language === 'greek') {
      stem = greekStemmer;
    } else {
      const stemmer = newStemmer(language);
      stem = (word) => stemmer.stem(word);
    }
    cache.set(language, stem);
  }
  return stem;
}
