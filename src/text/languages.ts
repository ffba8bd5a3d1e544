// Language names as Qdrant's API spells them, with the short aliases its deserializer also
// accepts ("en", "de", ...). Two lists: the languages with a stopword list (Qdrant's `Language`)
// and those with a Snowball stemmer (Qdrant's `SnowballLanguage`); they overlap but differ.

export const STOPWORD_LANGUAGES = [
  'arabic', 'azerbaijani', 'basque', 'bengali', 'catalan', 'chinese', 'danish', 'dutch', 'english', 'finnish',
  'french', 'german', 'greek', 'hebrew', 'hinglish', 'hungarian', 'indonesian', 'italian', 'japanese', 'kazakh',
  'nepali', 'norwegian', 'portuguese', 'romanian', 'russian', 'slovene', 'spanish', 'swedish', 'tajik', 'turkish',
] as const;
export type StopwordLanguage = (typeof STOPWORD_LANGUAGES)[number];

const STOPWORD_ALIASES: Record<string, StopwordLanguage> = {
  ar: 'arabic', az: 'azerbaijani', eu: 'basque', bn: 'bengali', ca: 'catalan', zh: 'chinese', da: 'danish', nl: 'dutch',
  en: 'english', fi: 'finnish', fr: 'french', de: 'german', el: 'greek', he: 'hebrew', 'hi-en': 'hinglish',
  hu: 'hungarian', id: 'indonesian', it: 'italian', jp: 'japanese', kk: 'kazakh', ne: 'nepali', no: 'norwegian',
  pt: 'portuguese', ro: 'romanian', ru: 'russian', sl: 'slovene', es: 'spanish', sv: 'swedish', tg: 'tajik', tr: 'turkish',
};

export const SNOWBALL_LANGUAGES = [
  'arabic', 'armenian', 'danish', 'dutch', 'english', 'finnish', 'french', 'german', 'greek', 'hungarian',
  'italian', 'norwegian', 'portuguese', 'romanian', 'russian', 'spanish', 'swedish', 'tamil', 'turkish',
] as const;
export type SnowballLanguage = (typeof SNOWBALL_LANGUAGES)[number];

const SNOWBALL_ALIASES: Record<string, SnowballLanguage> = {
  ar: 'arabic', hy: 'armenian', da: 'danish', nl: 'dutch', en: 'english', fi: 'finnish', fr: 'french', de: 'german',
  el: 'greek', hu: 'hungarian', it: 'italian', no: 'norwegian', pt: 'portuguese', ro: 'romanian', ru: 'russian',
  es: 'spanish', sv: 'swedish', ta: 'tamil', tr: 'turkish',
};

/** The stopword language a name or alias stands for (names are case-sensitive, as in Qdrant). */
export function stopwordLanguage(name: string): StopwordLanguage | undefined {
  return (STOPWORD_LANGUAGES as readonly string[]).includes(name) ? (name as StopwordLanguage) : own(STOPWORD_ALIASES, name);
}

/** The Snowball language a name or alias stands for. */
export function snowballLanguage(name: string): SnowballLanguage | undefined {
  return (SNOWBALL_LANGUAGES as readonly string[]).includes(name) ? (name as SnowballLanguage) : own(SNOWBALL_ALIASES, name);
}

function own<T>(table: Record<string, T>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}
