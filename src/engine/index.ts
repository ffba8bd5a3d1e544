export { Bitset } from './bitset.js';
export { DISTANCES, type Distance, largerIsCloser, metricCode, toScore } from './metric.js';
export { VectorIndex, type IndexConfig, type MultivectorConfig, type ScalarQuantization, type SearchOptions, type SearchResult, type QuantizationSearchParams } from './vector-index.js';
export { instantiate, EngineAbort, type EngineExports } from './exports.js';
