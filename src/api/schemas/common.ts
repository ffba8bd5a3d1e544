// Schemas shared by many request bodies: point ids, shard keys, payload and vector selectors,
// and the vector forms a point may carry.

import type { SchemaObject } from 'ajv';
import { andRule, exactObject, f32Seq, jsonObject, map, opt, seq, str, struct, uint, untagged, withRule, type Schema } from './builders.js';

/** ExtendedPointId; a custom keyword, since Qdrant words a bad id in its own way. */
export const POINT_ID: SchemaObject = { pointId: true };

export const POINT_IDS = seq(POINT_ID);

export const SHARD_KEY = untagged('ShardKey', [str(), uint('u64')]);

export const SHARD_KEY_SELECTOR = untagged('ShardKeySelector', [
  SHARD_KEY,
  seq(SHARD_KEY),
  struct('ShardKeyWithFallback', { target: SHARD_KEY, fallback: SHARD_KEY }, { required: ['target', 'fallback'] }),
]);

export const WITH_PAYLOAD = untagged('WithPayloadInterface', [
  { type: 'boolean' },
  seq(str()),
  untagged('PayloadSelector', [
    struct('PayloadSelectorInclude', { include: seq(str()) }, { required: ['include'], denyUnknown: true }),
    struct('PayloadSelectorExclude', { exclude: seq(str()) }, { required: ['exclude'], denyUnknown: true }),
  ]),
]);

export const WITH_VECTOR = untagged('WithVector', [{ type: 'boolean' }, seq(str())]);

/** Qdrant's Payload; its integers exact past 2^53 (the exactIntegers keyword, exact-integer-keywords.ts). */
export const PAYLOAD = exactObject();

/**
 * A dense vector, wherever one is sent: stored points, queries, examples. A component beyond the
 * f32 range would be stored as an infinity, which poisons every score computed with it (Qdrant
 * keeps it so), hence Quiver's rule, which sparse values share.
 */
export const DENSE = withRule(f32Seq(), { f32Components: true });
/** A multivector: a list of dense vectors, none empty, all of one length (checked under `data`, as Qdrant reports it). */
export const MULTI_DENSE = withRule(seq(DENSE), { multiDense: true, field: 'data' });

/** A sparse vector: Qdrant checks that the lists line up and that no index repeats (in that order). */
export const SPARSE = andRule(withRule(struct(
  'SparseVector',
  { indices: seq(uint('u32')), values: DENSE },
  { required: ['indices', 'values'] },
), { sparseLengths: true, field: 'values' }), { sparseUnique: true, field: 'indices' });

// Inference inputs: a Document for the local BM25 model is embedded (src/api/inference.ts); any
// other input needs an inference service, which Quiver, like Qdrant without one, answers with a
// service error.
export const DOCUMENT = struct(
  'Document',
  { text: str(), model: str(), options: opt(jsonObject()) },
  { required: ['text', 'model'] },
);
export const IMAGE = struct('Image', { image: true, model: str(), options: opt(jsonObject()) }, { required: ['image', 'model'] });
export const INFERENCE_OBJECT = struct(
  'InferenceObject',
  { object: true, model: str(), options: opt(jsonObject()) },
  { required: ['object', 'model'] },
);

const VECTOR = untagged('Vector', [DENSE, SPARSE, MULTI_DENSE, DOCUMENT, IMAGE, INFERENCE_OBJECT]);

export const VECTOR_STRUCT: Schema = untagged('VectorStruct', [
  DENSE,
  MULTI_DENSE,
  map(VECTOR),
  DOCUMENT,
  IMAGE,
  INFERENCE_OBJECT,
]);

export const BATCH_VECTOR_STRUCT: Schema = untagged('BatchVectorStruct', [
  seq(DENSE),
  seq(MULTI_DENSE),
  map(seq(VECTOR)),
  seq(DOCUMENT),
  seq(IMAGE),
  seq(INFERENCE_OBJECT),
]);
