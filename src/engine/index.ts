export { Bitset } from './bitset.js';
export { DISTANCES, type Distance, largerIsCloser, metricCode, toScore } from './metric.js';
export { VectorIndex, type IndexConfig, type MultivectorConfig, type ScalarQuantization, type SearchOptions, type SearchResult, type QuantizationSearchParams } from './vector-index.js';
export { DATATYPES, type Datatype, datatypeCode, elementBytes, FLOAT16_OVERFLOW, float16Overflow } from './datatype.js';
export { instantiate, EngineAbort, type EngineExports } from './exports.js';
export { SparseIndex, DEFAULT_SPARSE_FULL_SCAN_THRESHOLD, type SparseIndexConfig, type SparseSearchOptions, type SparseSearchResult } from './sparse-index.js';
export { normalizeSparse, type SparseVector, type SortedSparse } from './sparse-vector.js';
export { InvalidSparseVector, NotASparseIndex } from './sparse-errors.js';
export { idf, type IdfStatistics } from './sparse-idf.js';
