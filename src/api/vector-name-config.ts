// Qdrant's create/delete named vector (PUT/DELETE /collections/{name}/vectors/{vector}) as
// changes of a collection's configuration. A new vector gets only its immutable parts (size,
// distance, multivector, datatype; a sparse one its modifier and datatype), the rest defaults as
// in Qdrant. Creating a name that exists with the same parts changes nothing (Qdrant's create is
// idempotent); with other parts, or as the other kind, it is refused with Qdrant's message.
// Deleting takes the name out of dense and sparse vectors alike; a name that is not there is no
// error (Qdrant's removal is a no-op then).

import type { CollectionConfig, VectorParams } from '../collection/config-model.js';
import { nameViolations } from './collection-name.js';
import { validationError } from './messages.js';
import type { SparseVectorParams } from '../collection/kept-config.js';
import { BadInput } from '../errors.js';
import type { WireVectorNameConfig } from './types.js';

/** Qdrant's longest vector name, in UTF-8 bytes (names become directory components there). */
const MAX_VECTOR_NAME_BYTES = 200;

/**
 * Refuses a vector name in a request path as Qdrant's `validate_vector_name` does (422
 * "Validation error in path parameters"): at most 200 bytes, then a collection name's forbidden
 * characters.
 */
export function checkVectorName(name: string): void {
  const bytes = new TextEncoder().encode(name).length;
  const violations = bytes > MAX_VECTOR_NAME_BYTES
    ? [`vector name must be at most ${MAX_VECTOR_NAME_BYTES} bytes long`]
    : nameViolations(name, 'create', 'vector name');
  if (violations.length > 0) throw validationError(violations.map((message) => ({ path: 'vector_name', message })), 'path parameters');
}

export function addVectorName(config: CollectionConfig, name: string, body: WireVectorNameConfig): CollectionConfig {
  const { vectors, sparseVectors } = config.params;
  const sparse = sparseVectors ?? {};
  if ('dense' in body) {
    const { size, distance, multivector_config: multivector, datatype } = body.dense;
    const existing = Object.hasOwn(vectors.byName, name) ? vectors.byName[name] : undefined;
    if (existing) {
      const same = existing.size === size && existing.distance === distance && (existing.multivector?.comparator ?? null) === (multivector?.comparator ?? null) && existing.datatype === (datatype ?? null);
      if (!same) throw new BadInput(`Vector \`${name}\` already exists with a different configuration`);
      return config;
    }
    if (Object.hasOwn(sparse, name)) throw new BadInput(`Vector \`${name}\` already exists as a sparse vector`);
    const params: VectorParams = { size, distance, hnsw: null, quantization: null, onDisk: null, memory: null, datatype: datatype ?? null, multivector: multivector ?? null };
    // An unnamed collection becomes a named one keeping its vector under "" (Qdrant's map form).
    return { ...config, params: { ...config.params, vectors: { unnamed: false, byName: { ...vectors.byName, [name]: params } } } };
  }
  const { modifier, datatype } = body.sparse;
  const existing = Object.hasOwn(sparse, name) ? sparse[name] : undefined;
  if (existing) {
    const same = (existing.modifier ?? null) === (modifier ?? null) && (existing.index?.datatype ?? null) === (datatype ?? null);
    if (!same) throw new BadInput(`Sparse vector \`${name}\` already exists with a different configuration`);
    return config;
  }
  if (Object.hasOwn(vectors.byName, name)) throw new BadInput(`Vector \`${name}\` already exists as a dense vector`);
  const params: SparseVectorParams = { ...(datatype ? { index: { datatype } } : {}), ...(modifier ? { modifier } : {}) };
  return { ...config, params: { ...config.params, sparseVectors: { ...sparse, [name]: params } } };
}

export function removeVectorName(config: CollectionConfig, name: string): CollectionConfig {
  const { vectors, sparseVectors } = config.params;
  const byName = Object.fromEntries(Object.entries(vectors.byName).filter(([n]) => n !== name));
  const sparse = sparseVectors === null ? null : Object.fromEntries(Object.entries(sparseVectors).filter(([n]) => n !== name));
  return { ...config, params: { ...config.params, vectors: { ...vectors, byName }, sparseVectors: sparse } };
}

/** Whether the configuration has a dense or sparse vector of this name. */
export function hasVectorName(config: CollectionConfig, name: string): boolean {
  return Object.hasOwn(config.params.vectors.byName, name) || Object.hasOwn(config.params.sparseVectors ?? {}, name);
}
