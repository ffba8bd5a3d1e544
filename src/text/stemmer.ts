// Snowball stemmers for Qdrant's stemmer languages (Qdrant uses the rust-stemmers crate).
// snowball-stemmers (a port of the Snowball project's generated stemmers) serves every language
// but Greek, which it lacks; Greek comes from @orama/stemmers, also Snowball-generated.
// Stemmers expect lowercased input, as Qdrant's pipeline gives them (lowercase runs first).

import { createRequire } from 'node:module';
import type { SnowballLanguage } from './languages.js';

// Both packages are loaded on the first stemmer asked for (synchronously, through require): every
// language's generated stemmer is in them, which a start of a server or a shard worker need not load.
const require = createRequire(import.meta.url);

export type Stem = (word: string) => string;

const cache = new Map<SnowballLanguage, Stem>();

export function snowballStemmer(language: SnowballLanguage): Stem {
  let stem = cache.get(language);
  if (stem === undefined) {
    if (language === 'greek') {
      stem = (require('@orama/stemmers/greek') as typeof import('@orama/stemmers/greek')).stemmer;
    } else {
      const stemmer = (require('snowball-stemmers') as typeof import('snowball-stemmers')).newStemmer(language);
      stem = (word) => stemmer.stem(word);
    }
    cache.set(language, stem);
  }
  return stem;
}
