// Qdrant's `modifier: idf` for sparse vectors: at query time each query value is multiplied by
//   idf(q_i) = ln((N - n(q_i) + 0.5) / (n(q_i) + 0.5) + 1)
// where N is the number of documents (stored sparse vectors) and n(q_i) the number of documents
// with a non-zero value at index q_i (Qdrant's indexing docs; its query context computes the same
// with N = indexed vectors, n = posting list length). The statistics are the caller's: a shard
// asks each index for its counts (SparseIndex.documentCount, documentFrequencies) and sums them
// over shards, so every shard weighs a query the same way.

/** Collection-wide statistics for the indices of one query. */
export interface IdfStatistics {
  /** N: documents (stored sparse vectors) over every shard searched. */
  readonly documentCount: number;
  /** n(q_i) per query index, in the order of the query's `indices` as given. */
  readonly documentFrequencies: ArrayLike<number>;
}

/** Qdrant's IDF of an index present in `df` of `n` documents. */
export function idf(n: number, df: number): number {
  return Math.log((n - df + 0.5) / (df + 0.5) + 1);
}
