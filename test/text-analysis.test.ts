// Text analysis shared by text indexes and BM25: Snowball stemmer outputs (from the Snowball
// project's published vocabularies), per-language stopword lists, Lucene ASCII folding, and the
// order of Qdrant's token steps (fold, lowercase, stopwords, stem, length).

import t from 'tap';
import { asciiFold } from '../src/text/ascii-fold.js';
import { snowballLanguage, stopwordLanguage, SNOWBALL_LANGUAGES, STOPWORD_LANGUAGES } from '../src/text/languages.js';
import { snowballStemmer } from '../src/text/stemmer.js';
import { languageStopwords, stopwordSet } from '../src/text/stopwords.js';
import { createTokenizer } from '../src/text/tokenizer.js';

t.test('Snowball stemmers', async (t) => {
  const english = snowballStemmer('english');
  t.same(['running', 'runs', 'generously', 'happiness', 'caresses', 'ponies', 'dying', 'skies'].map(english),
    ['run', 'run', 'generous', 'happi', 'caress', 'poni', 'die', 'sky'], 'English (Porter2)');
  t.equal(snowballStemmer('french')('continuellement'), 'continuel');
  t.equal(snowballStemmer('german')('aufeinanderfolgenden'), 'aufeinanderfolg');
  t.equal(snowballStemmer('russian')('вавилонской'), 'вавилонск');
  t.equal(snowballStemmer('spanish')('corriendo'), 'corr');
  t.equal(snowballStemmer('turkish')('kitaplar'), 'kitap');
  t.equal(snowballStemmer('greek')('δρόμους'), 'δρομ', 'Greek, from @orama/stemmers');
  for (const language of SNOWBALL_LANGUAGES) t.type(snowballStemmer(language)('test'), 'string', `${language} has a stemmer`);
  t.equal(snowballLanguage('en'), 'english', 'aliases');
  t.equal(snowballLanguage('hy'), 'armenian');
  t.equal(snowballLanguage('English'), undefined, 'names are case-sensitive');
  t.equal(snowballLanguage('japanese'), undefined, 'a stopword language without a stemmer');
});

t.test('stopword lists per language', async (t) => {
  // One common word per language, as Qdrant's own stopword tests pick them.
  const samples: Record<string, string> = {
    arabic: 'في', basque: 'eta', bengali: 'এবং', catalan: 'i', chinese: '的', danish: 'og', dutch: 'en', english: 'and',
    finnish: 'ja', french: 'et', german: 'und', greek: 'και', hebrew: 'את', hungarian: 'és', indonesian: 'dan', italian: 'e',
    japanese: 'の', kazakh: 'жоқ', norwegian: 'og', portuguese: 'e', romanian: 'ar', russian: 'и', slovene: 'in',
    spanish: 'y', swedish: 'och', turkish: 've',
  };
  for (const [language, word] of Object.entries(samples)) {
    t.ok(stopwordSet(language, true).has(word), `"${word}" is a ${language} stopword`);
    t.notOk(stopwordSet(language, true).has('qdrant'), `"qdrant" is no ${language} stopword`);
  }
  for (const language of ['azerbaijani', 'hinglish', 'nepali', 'tajik'] as const) {
    t.same(languageStopwords(language), [], `${language}: accepted, no package has its list`);
  }
  t.equal(languageStopwords('english').length, 153, 'NLTK English without apostrophe forms');
  t.ok(languageStopwords('english').includes('mustn'));
  t.equal(STOPWORD_LANGUAGES.length, 30);
  t.equal(stopwordLanguage('hi-en'), 'hinglish');
  t.equal(stopwordLanguage('klingon'), undefined);

  t.same([...stopwordSet({ languages: ['english', 'german'], custom: ['Qdrant'] }, true)].filter((w) => ['the', 'und', 'qdrant'].includes(w)).sort(),
    ['qdrant', 'the', 'und'], 'languages and custom words together, lowercased');
  t.ok(stopwordSet({ custom: ['Qdrant'] }, false).has('Qdrant'), 'kept as given without lowercasing');
  t.notOk(stopwordSet({ custom: ['Qdrant'] }, false).has('qdrant'));
  t.equal(stopwordSet(null, true).size, 0);
});

t.test('ASCII folding follows Lucene\'s mapping', async (t) => {
  t.equal(asciiFold('Ação Straße Ørsted'), 'Acao Strasse Orsted');
  t.equal(asciiFold('ﬁne Æsir Œuvre'), 'fine AEsir OEuvre');
  t.equal(asciiFold('Привет'), 'Привет', 'letters without a mapping are kept');
  t.equal(asciiFold('plain'), 'plain');
});

t.test('token steps run in Qdrant\'s order', async (t) => {
  const english = { type: 'snowball', language: 'english' } as const;
  t.same(createTokenizer({ stemmer: english }).document('Running RUNS runner'), ['run', 'run', 'runner'], 'lowercased before stemming');
  t.same(createTokenizer({ stopwords: 'english', stemmer: english }).document('this was being done'), ['done'],
    'stopwords are checked before stemming ("was" would stem to "wa")');
  t.same(createTokenizer({ stemmer: english, min_token_len: 4 }).document('running jumping'), ['jump'], 'lengths are counted after stemming: "run" is too short');
  t.same(createTokenizer({ ascii_folding: true, stopwords: { custom: ['cafe'] } }).document('Café crème'), ['creme'], 'folding comes before the stopword check');
  t.same(createTokenizer({ lowercase: false, stopwords: 'english' }).document('The the'), ['The'], 'without lowercasing, lists match as written');
  // Prefix queries skip stopwords but are stemmed and cut.
  const prefix = createTokenizer({ tokenizer: 'prefix', stopwords: 'english', stemmer: english, max_token_len: 5 });
  t.same(prefix.document('the universities'), ['u', 'un', 'uni', 'univ', 'unive'], 'stored: the stem\'s prefixes, stopword dropped');
  t.same(prefix.query('the universities'), ['the', 'unive']);
  t.same(createTokenizer({ stemmer: { type: 'none' } }).document('running'), ['running'], '{type: none} stems nothing');
});
