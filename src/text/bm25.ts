// Qdrant's server-side BM25 model (`qdrant/bm25`, Qdrant 1.15+): text to a sparse vector, as
// Qdrant's bm25 crate computes it (lib/bm25/src/lib.rs):
// - the text is analysed (src/text/tokenizer.ts) with the model's options; documents go through
//   the document path, queries through the query path (they differ for the prefix tokenizer);
// - a token's index is murmur3 32-bit (x86, seed 0) of its UTF-8 bytes, read as an i32 and made
//   positive (|i32| as u32, so 2^31 stays 2^31);
// - a document gets, per distinct token occurring n times in a text of len tokens,
//   n (k + 1) / (k (1 - b + b len / avg_len) + n), computed in f64 and stored as f32;
// - a query gets weight 1 per distinct token;
// - indices come sorted ascending, without repeats; an empty analysis gives an empty vector.
// IDF is not part of the vector: Qdrant applies it at search time through the sparse vector's
// `modifier: idf`. Qdrant reports no inference usage for BM25: a request whose inputs are all
// local answers `usage: None`, and a mixed one counts only the remote models' usage
// (src/common/inference/service.rs, InferenceService::infer).

import murmurhash from 'murmurhash';
import { bm25Params, type Bm25Params } from './bm25-options.js';
import { createTokenizer, type Tokenizer } from './tokenizer.js';

export interface SparseEmbedding {
  /** Token ids, ascending, distinct (u32). */
  indices: number[];
  /** Weights, f32 values. */
  values: number[];
}

export interface Bm25Embedding extends SparseEmbedding {
  /** Tokens the analysis produced for the text (Qdrant counts no inference usage for BM25). */
  tokens: number;
}

/** Qdrant treats these model names (compared case-insensitively) as its local BM25 model. */
export function isBm25Model(model: string): boolean {
  const name = model.toLowerCase();
  return name === 'qdrant/bm25' || name === 'bm25';
}

/** The sparse index of a token: |murmur3_32(utf8(token), 0) as i32|. */
export function tokenId(token: string): number {
  const hash = murmurhash.v3(token, 0);
  return hash >= 0x80000000 ? 0x100000000 - hash : hash;
}

export class Bm25 {
  private readonly tokenizer: Tokenizer;

  private constructor(private readonly params: Bm25Params) {
    this.tokenizer = createTokenizer(params.analysis);
  }

  /** A model for a Document's options; throws BadInput for options Qdrant rejects. */
  static fromOptions(options?: Readonly<Record<string, unknown>> | null): Bm25 {
    return new Bm25(bm25Params(options));
  }

  /** The vector stored for a document text (points upsert / update vectors). */
  document(text: string): Bm25Embedding {
    const tokens = this.tokenizer.document(text);
    const counts = new Map<string, number>();
    for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    const { k, b, avgLen } = this.params;
    const norm = k * (1 - b + (b * tokens.length) / avgLen);
    // Keyed by id: two tokens with one id keep one weight, as Qdrant's map by id does.
    const weights = new Map<number, number>();
    for (const [token, n] of counts) weights.set(tokenId(token), Math.fround((n * (k + 1)) / (norm + n)));
    const indices = [...weights.keys()].sort((x, y) => x - y);
    return { indices, values: indices.map((i) => weights.get(i)!), tokens: tokens.length };
  }

  /** The vector searched with for a query text. */
  query(text: string): Bm25Embedding {
    const tokens = this.tokenizer.query(text);
    const indices = [...new Set(tokens.map(tokenId))].sort((x, y) => x - y);
    return { indices, values: indices.map(() => 1), tokens: tokens.length };
  }
}
