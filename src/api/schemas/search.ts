// Search bodies: v1.18's /points/search and /points/recommend (single and batch), the query
// API's nearest and recommend queries (/points/query and its batch), and /facet.

import type { SchemaObject } from 'ajv';
import { bool, f32Seq, float, FILTER, jsonPath, opt, seq, str, struct, uint, unitEnum, untagged, withRule } from './builders.js';
import { DENSE, DOCUMENT, MULTI_DENSE, IMAGE, INFERENCE_OBJECT, POINT_ID, SPARSE, SHARD_KEY_SELECTOR, WITH_PAYLOAD, WITH_VECTOR } from './common.js';
import { ORDER_BY } from './points.js';
import { ruledRef } from './derive.js';
import { FORMULA_QUERY } from './formula.js';

const QUANTIZATION_SEARCH_PARAMS = struct('QuantizationSearchParams', {
  ignore: bool(),
  rescore: opt(bool()),
  oversampling: opt(withRule(float('f64'), { range: { min: 1 }, float: 'f64' })),
});

export const SEARCH_PARAMS = struct('SearchParams', {
  hnsw_ef: opt(withRule(uint('usize'), { range: { min: 1 } })),
  exact: bool(),
  quantization: opt(QUANTIZATION_SEARCH_PARAMS),
  indexed_only: bool(),
  acorn: opt({ type: 'object' }),
  idf: opt(untagged('IdfParams', [unitEnum(['global']), struct('IdfCorpusParams', { corpus: FILTER }, { required: ['corpus'] })])),
});

const NAMED_VECTOR_STRUCT = untagged('NamedVectorStruct', [
  DENSE,
  struct('NamedVector', { name: str(), vector: DENSE }, { required: ['name', 'vector'] }),
  struct('NamedSparseVector', { name: str(), vector: SPARSE }, { required: ['name', 'vector'] }),
]);

const LIMIT = withRule(uint('usize'), { range: { min: 1 } });

/** What every v1.18 search-like request shares: where to look, how many, what to return. */
const RESULT_FIELDS = {
  shard_key: opt(SHARD_KEY_SELECTOR),
  filter: opt(FILTER),
  params: opt(SEARCH_PARAMS),
  limit: LIMIT,
  offset: opt(uint('usize')),
  with_payload: opt(WITH_PAYLOAD),
  with_vector: opt(WITH_VECTOR),
  score_threshold: opt(float('f32')),
};

/** Qdrant's serde aliases: `with_vectors` for `with_vector`, `top` for `limit` (where the Rust type has them). */
const WITH_VECTORS_ALIAS = { with_vectors: 'with_vector' };
const TOP_ALIAS = { top: 'limit' };

export const SEARCH_REQUEST = struct('SearchRequest', { ...RESULT_FIELDS, vector: NAMED_VECTOR_STRUCT }, { required: ['vector', 'limit'], aliases: { ...WITH_VECTORS_ALIAS, ...TOP_ALIAS } });

export const SEARCH_REQUEST_BATCH = struct('SearchRequestBatch', { searches: seq(SEARCH_REQUEST) }, { required: ['searches'] });

const VECTOR_INPUT = untagged('VectorInput', [DENSE, SPARSE, MULTI_DENSE, POINT_ID, DOCUMENT, IMAGE, INFERENCE_OBJECT]);

const STRATEGY = opt(unitEnum(['average_vector', 'best_score', 'sum_scores']));

const LOOKUP_LOCATION = struct('LookupLocation', { collection: str(), vector: opt(str()), shard_key: opt(SHARD_KEY_SELECTOR) }, { required: ['collection'] });

/** Maximal marginal relevance over a nearest query's candidates. */
const MMR = struct('Mmr', {
  diversity: opt(withRule(float('f32'), { range: { min: 0, max: 1 }, float: 'f32' })),
  candidates_limit: opt(withRule(uint('usize'), { range: { max: 16_384 } })),
});

const RELEVANCE_FEEDBACK_INPUT = struct('RelevanceFeedbackInput', {
  target: VECTOR_INPUT,
  feedback: seq(struct('FeedbackItem', { example: VECTOR_INPUT, score: float('f32') }, { required: ['example', 'score'] })),
  strategy: untagged('FeedbackStrategy', [
    struct('NaiveFeedbackStrategy', {
      naive: struct('NaiveFeedbackStrategyParams', {
        a: float('f32'),
        b: withRule(float('f32'), { range: { min: 0 }, float: 'f32' }),
        c: float('f32'),
      }, { required: ['a', 'b', 'c'] }),
    }, { required: ['naive'] }),
  ]),
}, { required: ['target', 'feedback', 'strategy'] });

const CONTEXT_PAIR = struct('ContextPair', { positive: VECTOR_INPUT, negative: VECTOR_INPUT }, { required: ['positive', 'negative'] });
const CONTEXT_INPUT = opt(untagged('ContextInput', [CONTEXT_PAIR, seq(CONTEXT_PAIR)]));

/**
 * Registered on its own (id "QueryInterface", rules "QueryInterfaceRules") and referenced, not
 * inlined: inside the prefetch validator it made each level's stack frame so large that 125
 * nested prefetches, which serde accepts, overflowed the stack.
 */
export const QUERY_INTERFACE_SCHEMA: SchemaObject = { ...untagged('QueryInterface', [
  VECTOR_INPUT,
  struct('NearestQuery', { nearest: VECTOR_INPUT, mmr: opt(MMR) }, { required: ['nearest'] }),
  struct('RecommendQuery', {
    recommend: struct('RecommendInput', { positive: opt(seq(VECTOR_INPUT)), negative: opt(seq(VECTOR_INPUT)), strategy: STRATEGY }),
  }, { required: ['recommend'] }),
  struct('DiscoverQuery', {
    discover: struct('DiscoverInput', { target: VECTOR_INPUT, context: CONTEXT_INPUT }, { required: ['target', 'context'] }),
  }, { required: ['discover'] }),
  struct('ContextQuery', { context: CONTEXT_INPUT }, { required: ['context'] }),
  struct('FusionQuery', { fusion: unitEnum(['rrf', 'dbsf']) }, { required: ['fusion'] }),
  struct('RrfQuery', {
    rrf: struct('Rrf', { k: opt(withRule(uint('usize'), { range: { min: 1 } })), weights: opt(f32Seq()) }),
  }, { required: ['rrf'] }),
  struct('OrderByQuery', { order_by: ORDER_BY }, { required: ['order_by'] }),
  FORMULA_QUERY,
  struct('SampleQuery', { sample: unitEnum(['random']) }, { required: ['sample'] }),
  struct('RelevanceFeedbackQuery', { relevance_feedback: RELEVANCE_FEEDBACK_INPUT }, { required: ['relevance_feedback'] }),
]), $id: 'QueryInterface' };
const QUERY_INTERFACE = ruledRef('QueryInterface', 'QueryInterfaceRules');

/** Fields a query shares with its prefetches (a prefetch has no offset and no result shape). */
const QUERY_CORE = {
  query: opt(QUERY_INTERFACE),
  using: opt(str()),
  lookup_from: opt(LOOKUP_LOCATION),
  filter: opt(FILTER),
  params: opt(SEARCH_PARAMS),
  score_threshold: opt(float('f32')),
  limit: opt(LIMIT),
};

/**
 * Prefetch nests itself, so it is its own schema (registered under the id "Prefetch", as the
 * filter is, and its rules under "PrefetchRules") and refers to itself.
 */
const PREFETCH_REF = ruledRef('Prefetch', 'PrefetchRules');
const PREFETCHES = opt(untagged('Prefetches', [PREFETCH_REF, seq(PREFETCH_REF)]));

export const PREFETCH_SCHEMA: SchemaObject = { ...struct('Prefetch', { ...QUERY_CORE, prefetch: PREFETCHES }), $id: 'Prefetch' };

export const RECOMMEND_REQUEST = struct('RecommendRequest', {
  ...RESULT_FIELDS,
  positive: seq(VECTOR_INPUT),
  negative: seq(VECTOR_INPUT),
  strategy: STRATEGY,
  using: opt(str()),
  lookup_from: opt(LOOKUP_LOCATION),
}, { required: ['limit'], aliases: { ...WITH_VECTORS_ALIAS, ...TOP_ALIAS } });

export const DISCOVER_REQUEST = struct('DiscoverRequest', {
  ...RESULT_FIELDS,
  target: opt(VECTOR_INPUT),
  context: opt(seq(CONTEXT_PAIR)),
  using: opt(str()),
  lookup_from: opt(LOOKUP_LOCATION),
}, { required: ['limit'], aliases: TOP_ALIAS });

export const DISCOVER_REQUEST_BATCH = struct('DiscoverRequestBatch', { searches: seq(DISCOVER_REQUEST) }, { required: ['searches'] });

export const RECOMMEND_REQUEST_BATCH = struct('RecommendRequestBatch', { searches: seq(RECOMMEND_REQUEST) }, { required: ['searches'] });

export const QUERY_REQUEST = struct('QueryRequest', {
  shard_key: opt(SHARD_KEY_SELECTOR),
  ...QUERY_CORE,
  prefetch: PREFETCHES,
  offset: opt(uint('usize')),
  with_vector: opt(WITH_VECTOR),
  with_payload: opt(WITH_PAYLOAD),
}, { aliases: WITH_VECTORS_ALIAS });

export const QUERY_REQUEST_BATCH = struct('QueryRequestBatch', { searches: seq(QUERY_REQUEST) }, { required: ['searches'] });

export const FACET_REQUEST = struct('FacetRequest', {
  shard_key: opt(SHARD_KEY_SELECTOR),
  key: jsonPath(),
  limit: opt(LIMIT),
  filter: opt(FILTER),
  exact: opt(bool()),
}, { required: ['key'] });

const WITH_LOOKUP = untagged('WithLookupInterface', [
  str(),
  struct('WithLookup', { collection: str(), with_payload: opt(WITH_PAYLOAD), with_vectors: opt(WITH_VECTOR) }, { required: ['collection'], aliases: { with_vector: 'with_vectors' } }),
]);

const GROUP_BY = jsonPath();

/**
 * The grouping fields added to a search-like body: v1.18 bodies require both sizes, as u32; the
 * query API's are optional usize.
 */
function grouped(name: string, base: SchemaObject, required: string[], optionalSizes: boolean, aliases?: Record<string, string>) {
  const size = withRule(uint(optionalSizes ? 'usize' : 'u32'), { range: { min: 1 } });
  return struct(name, {
    ...base.properties,
    group_by: GROUP_BY,
    group_size: optionalSizes ? opt(size) : size,
    limit: optionalSizes ? opt(size) : size,
    with_lookup: opt(WITH_LOOKUP),
  }, { required, aliases });
}

export const SEARCH_GROUPS_REQUEST = grouped('SearchGroupsRequest', SEARCH_REQUEST, ['vector', 'group_by', 'group_size', 'limit'], false, WITH_VECTORS_ALIAS);
export const RECOMMEND_GROUPS_REQUEST = grouped('RecommendGroupsRequest', RECOMMEND_REQUEST, ['group_by', 'group_size', 'limit'], false, WITH_VECTORS_ALIAS);
export const QUERY_GROUPS_REQUEST = grouped('QueryGroupsRequest', QUERY_REQUEST, ['group_by'], true);

export const SEARCH_MATRIX_REQUEST = struct('SearchMatrixRequest', {
  shard_key: opt(SHARD_KEY_SELECTOR),
  filter: opt(FILTER),
  sample: opt(withRule(uint('usize'), { range: { min: 2 } })),
  limit: opt(LIMIT),
  using: opt(str()),
});
