// Inference inputs (Qdrant's Document, Image and InferenceObject) turned into vectors, as Qdrant's
// server does before anything reaches a shard. Quiver has Qdrant's local model only: `qdrant/bm25`
// (src/text/bm25.ts), which makes a sparse vector of a text; any other model needs an external
// inference service, which Quiver, like a Qdrant without one configured, does not have. Stored
// texts are embedded as documents (BM25 weights), texts in queries and examples as queries.

import type { SparseVector } from '../model.js';
import { Bm25, isBm25Model } from '../text/bm25.js';
import { inferenceServiceUnavailable, textOnlyModel } from '../text/inference-errors.js';
import type { WireInferenceInput } from './types.js';

/** Models by their options: a batch of documents with one set of options builds its analysis once. */
const models = new Map<string, Bm25>();
const MODELS_KEPT = 32;

function modelFor(options: WireInferenceInput['options']): Bm25 {
  const key = JSON.stringify(options ?? null);
  let model = models.get(key);
  if (!model) {
    model = Bm25.fromOptions(options);
    if (models.size >= MODELS_KEPT) models.delete(models.keys().next().value!);
    models.set(key, model);
  }
  return model;
}

export function isInferenceInput(value: object): value is WireInferenceInput {
  return typeof (value as { model?: unknown }).model === 'string';
}

/** The vector of an inference input: a stored point's (`document`) or a query's. */
export function inferVector(input: WireInferenceInput, role: 'document' | 'query'): SparseVector {
  if (!isBm25Model(input.model)) throw inferenceServiceUnavailable();
  if (!('text' in input)) throw textOnlyModel(input.model);
  const model = modelFor(input.options);
  const embedded = role === 'document' ? model.document(input.text) : model.query(input.text);
  return { indices: Uint32Array.from(embedded.indices), values: Float32Array.from(embedded.values) };
}
