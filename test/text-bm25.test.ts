// BM25 inference (qdrant/bm25): token ids against published murmur3 test vectors, document
// weights against the BM25 term-frequency formula worked out here, query vectors, the option
// defaults and overrides, and the errors Qdrant answers for bad options.

import t from 'tap';
import { Bm25, isBm25Model, tokenId } from '../src/text/bm25.js';
import { inferenceServiceUnavailable, textOnlyModel } from '../src/text/inference-errors.js';
import { rustFloat } from '../src/text/rust-format.js';
import { BadInput, ServiceError } from '../src/errors.js';

/** n (k + 1) / (k (1 - b + b len / avg_len) + n), rounded to f32 as Qdrant stores it. */
function weight(n: number, len: number, k = 1.2, b = 0.75, avgLen = 256): number {
  return Math.fround((n * (k + 1)) / (k * (1 - b + (b * len) / avgLen) + n));
}

/** The sparse vector of distinct tokens with their counts, for a document of `len` tokens. */
function reference(counts: Record<string, number>, len: number, k?: number, b?: number, avgLen?: number) {
  const entries = Object.entries(counts).map(([token, n]) => [tokenId(token), weight(n, len, k, b, avgLen)] as const);
  entries.sort((x, y) => x[0] - y[0]);
  return { indices: entries.map((e) => e[0]), values: entries.map((e) => e[1]), tokens: len };
}

t.test('token ids are murmur3 x86 32-bit of the UTF-8 bytes, seed 0, as a positive i32', async (t) => {
  t.equal(tokenId('hello'), 0x248bfa47, 'murmur3("hello") = 0x248bfa47 has the top bit clear: kept');
  t.equal(tokenId('test'), 0x100000000 - 0xba6bd213, 'murmur3("test") = 0xba6bd213 reads as a negative i32: its absolute value');
  t.equal(tokenId('The quick brown fox jumps over the lazy dog'), 0x2e4ff723);
  t.equal(tokenId(''), 0);
  t.not(tokenId('é'), tokenId('e'), 'hashed over UTF-8 bytes, not folded');
});

t.test('document vectors follow the BM25 term-frequency formula', async (t) => {
  // Worked by hand: 3 tokens, avg_len 3, so the length factor is 1 and k(1) = 1.2.
  const plain = Bm25.fromOptions({ language: 'none', avg_len: 3 });
  const doc = plain.document('hello hello world');
  const hello = tokenId('hello');
  const world = tokenId('world');
  t.same(doc, { indices: [Math.min(hello, world), Math.max(hello, world)], values: hello < world ? [1.375, 1] : [1, 1.375], tokens: 3 });

  // Defaults: English stopwords and stemmer, k 1.2, b 0.75, avg_len 256.
  const bm25 = Bm25.fromOptions();
  const text = 'The running dogs run and the dog runs';
  t.same(bm25.document(text), reference({ run: 3, dog: 2 }, 5), '"the", "and" dropped; running, run, runs -> run; dogs, dog -> dog');

  const tuned = Bm25.fromOptions({ k: 2, b: 0.5, avg_len: 10 });
  t.same(tuned.document('search engines search'), reference({ search: 2, engin: 1 }, 3, 2, 0.5, 10), 'k, b and avg_len options');
  t.same(Bm25.fromOptions({ b: 0 }).document('a long long text text text'), reference({ long: 2, text: 3 }, 5, 1.2, 0), 'b = 0: no length normalisation');
  t.same(bm25.document('the and of'), { indices: [], values: [], tokens: 0 }, 'only stopwords: an empty vector');
});

t.test('query vectors weigh every distinct token 1, indices ascending', async (t) => {
  const bm25 = Bm25.fromOptions();
  const ids = [tokenId('run'), tokenId('dog')].sort((a, b) => a - b);
  t.same(bm25.query('Running dogs run, the dog'), { indices: ids, values: [1, 1], tokens: 4 });
  t.same(bm25.query(''), { indices: [], values: [], tokens: 0 });
});

t.test('language, stopwords and stemmer options', async (t) => {
  const tokensOf = (options: Record<string, unknown>, text: string) => Bm25.fromOptions(options).query(text).indices;
  const ids = (...tokens: string[]) => [...new Set(tokens.map(tokenId))].sort((a, b) => a - b);

  t.same(tokensOf({ language: 'french' }, 'Le chat et le chien'), ids('chat', 'chien'), 'French stopwords and stemmer');
  t.same(tokensOf({ language: 'fr' }, 'Le chat et le chien'), ids('chat', 'chien'), 'language aliases as Qdrant accepts them');
  t.same(tokensOf({ language: 'none' }, 'The running dogs'), ids('the', 'running', 'dogs'), 'no such language: neither stopwords nor stemming');
  t.same(tokensOf({ stemmer: { type: 'none' } }, 'The running dogs'), ids('running', 'dogs'), 'stemming off, English stopwords kept');
  t.same(tokensOf({ stopwords: { custom: ['dogs'] } }, 'The running dogs'), ids('the', 'run'), 'explicit stopwords replace the language list');
  t.same(tokensOf({ stopwords: 'german', stemmer: { type: 'snowball', language: 'german' } }, 'Der Hund und die Katzen'), ids('hund', 'katz'));
  t.same(tokensOf({ language: 'russian' }, 'и книги'), ids('книг'));
  t.same(tokensOf({ tokenizer: 'whitespace', language: 'none' }, 'e-mail me'), ids('e-mail', 'me'));
  t.same(tokensOf({ lowercase: false, language: 'none' }, 'Hello hello'), ids('Hello', 'hello'));
  t.same(tokensOf({ ascii_folding: true, language: 'none' }, 'Café naïve'), ids('cafe', 'naive'));
  t.same(tokensOf({ min_token_len: 4, language: 'none' }, 'a tree in winter'), ids('tree', 'winter'));
  t.same(tokensOf({ max_token_len: 4, language: 'none' }, 'a tree in winter'), ids('a', 'tree', 'in'));

  // Prefix: a document stores every prefix, a query only its word (cut to max_token_len).
  const prefix = Bm25.fromOptions({ tokenizer: 'prefix', language: 'none', min_token_len: 2, max_token_len: 4 });
  t.same(prefix.document('hello').indices, ids('he', 'hel', 'hell'));
  t.same(prefix.query('hello').indices, ids('hell'));
  t.equal(prefix.document('hello').tokens, 3);
});

t.test('bad options are answered with Qdrant\'s messages', async (t) => {
  const fails = (options: Record<string, unknown>, message: string) => {
    let error: unknown;
    try {
      Bm25.fromOptions(options);
    } catch (e) {
      error = e;
    }
    t.ok(error instanceof BadInput && error.statusCode === 400, `${JSON.stringify(options)} is bad input`);
    t.equal((error as Error | undefined)?.message, message);
  };
  fails({ k: -1 }, 'Wrong input: BM25 k1 must be finite and >= 0, got -1');
  fails({ b: 1.5 }, 'Wrong input: BM25 b must be finite and in [0.0, 1.0], got 1.5');
  fails({ b: -0.25 }, 'Wrong input: BM25 b must be finite and in [0.0, 1.0], got -0.25');
  fails({ avg_len: 0 }, 'Wrong input: BM25 avg_doc_len must be finite and > 0, got 0');
  fails({ k: 'x' }, 'Wrong input: Invalid BM25 config: Error("invalid type: string \\"x\\", expected f64", line: 0, column: 0)');
  fails({ tokenizer: 'words' }, 'Wrong input: Invalid BM25 config: Error("unknown variant `words`, expected one of `prefix`, `whitespace`, `word`, `multilingual`", line: 0, column: 0)');
  fails({ lowercase: 1 }, 'Wrong input: Invalid BM25 config: Error("invalid type: integer `1`, expected a boolean", line: 0, column: 0)');
  fails({ min_token_len: -1 }, 'Wrong input: Invalid BM25 config: Error("invalid value: integer `-1`, expected usize", line: 0, column: 0)');
  fails({ stopwords: 'klingon' }, 'Wrong input: Invalid BM25 config: Error("data did not match any variant of untagged enum StopwordsInterface", line: 0, column: 0)');
  fails({ stemmer: { type: 'snowball', language: 'klingon' } }, 'Wrong input: Invalid BM25 config: Error("data did not match any variant of untagged enum StemmingAlgorithm", line: 0, column: 0)');
  t.equal(Bm25.fromOptions({ k: 0, b: 1, unknown_key: true }).document('x x').values[0], 1, 'k = 0 is binary weighting; unknown keys are ignored');
});

t.test('model names and the errors around inference', async (t) => {
  t.equal(isBm25Model('qdrant/bm25'), true);
  t.equal(isBm25Model('Qdrant/bm25'), true, 'compared case-insensitively');
  t.equal(isBm25Model('bm25'), true);
  t.equal(isBm25Model('qdrant/bm42'), false);
  t.equal(isBm25Model('sentence-transformers/all-minilm-l6-v2'), false);
  const unavailable = inferenceServiceUnavailable();
  t.ok(unavailable instanceof ServiceError);
  t.equal(unavailable.statusCode, 500);
  t.equal(unavailable.message, 'Service internal error: InferenceService URL not configured - please provide valid address in config');
  t.equal(textOnlyModel('qdrant/bm25').message, 'Wrong input: Only text input is supported for qdrant/bm25.');
});

t.test('numbers in messages print as Rust prints an f64', async (t) => {
  t.equal(rustFloat(-1), '-1');
  t.equal(rustFloat(1.5), '1.5');
  t.equal(rustFloat(1e21), '1000000000000000000000');
  t.equal(rustFloat(-2.5e-7), '-0.00000025');
});
