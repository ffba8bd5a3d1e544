// Full-text index: tokenizers (cases from Qdrant's tokenizer tests), and text, text_any and
// phrase conditions over the point's strings.

import t from 'tap';
import type { TextIndexParams } from '../src/shard/payload-index/schema.js';
import { createTokenizer } from '../src/shard/payload-index/tokenizer.js';
import { hasMatchSemantics } from '../src/shard/payload-index/types.js';
import { answer, indexOf } from './helpers/filter-index.js';

const tokens = (params: Omit<TextIndexParams, 'type'>, text: string, kind: 'document' | 'query' = 'document') =>
  createTokenizer({ type: 'text', ...params })[kind](text);

t.test('tokenizers', async (t) => {
  t.same(tokens({ tokenizer: 'word', lowercase: false }, 'hello, world! Привет, мир!'), ['hello', 'world', 'Привет', 'мир']);
  t.same(tokens({ tokenizer: 'word' }, 'hello, world! Привет, мир!'), ['hello', 'world', 'привет', 'мир'], 'lowercase by default');
  t.same(tokens({ tokenizer: 'whitespace' }, 'hello world  it\'s\tme'), ['hello', 'world', 'it\'s', 'me']);
  t.same(tokens({}, 'e-mail 42x'), ['e', 'mail', '42x'], 'word is the default tokenizer');
  // Prefix: stored words become their prefixes; query words are cut to max_token_len.
  t.same(tokens({ tokenizer: 'prefix', min_token_len: 1, max_token_len: 4 }, 'hello, мир!'), ['h', 'he', 'hel', 'hell', 'м', 'ми', 'мир']);
  t.same(tokens({ tokenizer: 'prefix', max_token_len: 4 }, 'hello, мир!', 'query'), ['hell', 'мир']);
  t.same(tokens({ tokenizer: 'prefix', min_token_len: 3 }, 'to theory'), ['the', 'theo', 'theor', 'theory']);
  t.same(tokens({ min_token_len: 2, max_token_len: 4 }, 'a be sea tree apple'), ['be', 'sea', 'tree']);
  t.same(tokens({ stopwords: { custom: ['The', 'of'] } }, 'The Lord of the Rings'), ['lord', 'rings']);
  t.same(tokens({ stopwords: { custom: ['The'] }, lowercase: false }, 'The the'), ['the']);
  t.same(tokens({ tokenizer: 'prefix', stopwords: { custom: ['the'] } }, 'the', 'query'), ['the'], 'query prefixes keep stopwords');
  t.same(tokens({ ascii_folding: true }, 'Ação Straße Ørsted'), ['acao', 'strasse', 'orsted']);
});

t.test('text conditions with a text index', async (t) => {
  // Qdrant's full-text index tests (text_match, text_any, text_phrase): the point's strings are
  // judged together for text and text_any, one at a time for phrases.
  const index = indexOf('d', { type: 'text', phrase_matching: true }, [
    { d: 'gamma alpha beta' },
    { d: 'beta alpha' },
    { d: ['alpha', 'delta beta'] },
    {},
    { d: 'alpha gamma' },
    { d: ['beta', 'delta beta'] },
    { d: ['gamma alpha', 'beta delta'] },
    { d: 'Alpha-Beta!' },
    { d: 17 },
  ]);
  t.equal(index.indexedPoints(), 7);
  t.same(answer(index, { key: 'd', match: { text: 'alpha beta' } }), [0, 1, 2, 6, 7]);
  t.same(answer(index, { key: 'd', match: { text_any: 'alpha beta' } }), [0, 1, 2, 4, 5, 6, 7]);
  t.same(answer(index, { key: 'd', match: { text_any: 'zeta' } }), []);
  t.same(answer(index, { key: 'd', match: { phrase: 'alpha beta' } }), [0, 7]);
  t.same(answer(index, { key: 'd', match: { text: 'alpha zeta' } }), [], 'a token nobody has');
  t.same(answer(index, { key: 'd', match: { text: '!!' } }), [], 'no tokens, no match');
  t.same(answer(index, { key: 'd', match: { value: 'beta alpha' } }), undefined, 'exact matches are left to payload checks');
  t.same(answer(index, { key: 'd', match: { prefix: 'al' } }), undefined);

  if (!hasMatchSemantics(index)) throw new Error('text indexes define match semantics');
  t.equal(index.matchValues([['x Beta', 'ALPHA']], { kind: 'text', text: 'alpha beta' }), true, 'point checks use the same rules');
  t.equal(index.matchValues(['gamma alpha', 'beta delta'], { kind: 'phrase', text: 'alpha beta' }), false);
  t.equal(index.matchValues(['alpha'], { kind: 'value', value: 'alpha' }), undefined, 'exact matches compare as usual');

  index.add(1, { d: 'nothing here' });
  index.remove(0);
  t.same(answer(index, { key: 'd', match: { text: 'alpha beta' } }), [2, 6, 7], 'updates are seen');
});

t.test('prefix tokenizer search', async (t) => {
  const index = indexOf('d', { type: 'text', tokenizer: 'prefix', min_token_len: 2, max_token_len: 5 }, [{ d: 'theory of everything' }, { d: 'the end' }]);
  t.same(answer(index, { key: 'd', match: { text: 'the' } }), [0, 1]);
  t.same(answer(index, { key: 'd', match: { text: 'theor' } }), [0]);
  t.same(answer(index, { key: 'd', match: { text: 'theorem' } }), [0], 'query words are cut to max_token_len: "theorem" looks for "theor"');
  t.same(answer(index, { key: 'd', match: { text: 'e' } }), [], 'query words below min_token_len are dropped, leaving no tokens');
});

t.test('text conditions with a stemmer and language stopwords', async (t) => {
  const index = indexOf('d', {
    type: 'text',
    phrase_matching: true,
    stemmer: { type: 'snowball', language: 'english' },
    stopwords: 'english',
  }, [
    { d: 'The dog is running fast' },
    { d: 'he runs every day' },
    { d: 'the runner' },
    { d: 'The Lord of the Rings' },
    { d: 'lord rings' },
  ]);
  t.same(answer(index, { key: 'd', match: { text: 'running' } }), [0, 1], '"running" finds "runs": both stem to "run"');
  t.same(answer(index, { key: 'd', match: { text: 'run' } }), [0, 1]);
  t.same(answer(index, { key: 'd', match: { text: 'runners' } }), [2]);
  t.same(answer(index, { key: 'd', match: { text_any: 'runs dogs' } }), [0, 1]);
  t.same(answer(index, { key: 'd', match: { text: 'the' } }), [], 'a query of stopwords only has no tokens');
  t.same(answer(index, { key: 'd', match: { phrase: 'lord of the rings' } }), [3, 4], 'stopwords leave the phrase [lord, ring]');
  t.same(answer(index, { key: 'd', match: { phrase: 'dog ran' } }), [], '"ran" is not stemmed to "run"');
  t.same(answer(index, { key: 'd', match: { phrase: 'dogs runs' } }), [0], 'phrase tokens are stemmed like stored ones');
  if (!hasMatchSemantics(index)) throw new Error('text indexes define match semantics');
  t.equal(index.matchValues(['A dog running'], { kind: 'text', text: 'dogs runs' }), true, 'point checks stem too');

  const german = indexOf('d', { type: 'text', stopwords: { languages: ['german'], custom: ['hallo'] } }, [{ d: 'Hallo und Tschüss' }]);
  t.same(answer(german, { key: 'd', match: { text: 'und' } }), [], 'German stopwords');
  t.same(answer(german, { key: 'd', match: { text: 'tschüss' } }), [0]);
  t.same(answer(german, { key: 'd', match: { text_any: 'hallo tschüss' } }), [0], 'custom stopwords are dropped from the query too');
});
