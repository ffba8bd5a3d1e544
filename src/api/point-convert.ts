// Conversions between Qdrant's point JSON and Quiver's point model: vectors, payloads, the
// two upsert forms, read selectors, and the Record shape points are returned in. Bodies are
// expected to have passed their schema (validator.ts), which has already checked types, ids and
// the lengths of a batch.

import { normalizeSparse } from '../engine/index.js';
import { DEFAULT_VECTOR, isDense, isSparse, multiCount, type MultiVector, type NamedVectors, type Payload, type PointId, type SparseVector, type Vector } from '../model.js';
import { shortF32s } from './f32-number.js';
import { inferVector, isInferenceInput } from './inference.js';
import { formatError } from './messages.js';
import { parseJsonPath, type JsonPath } from '../shard/filter/json-path.js';
import { toPointId } from './point-id.js';
import type {
  WireBatch,
  WirePointId,
  WirePointInsertOperations,
  WireSparseVector,
  WireVector,
  WireVectorStruct,
  WireWithPayload,
  WireWithVector,
} from './types.js';
import type { PayloadSelection, PointView, VectorSelection } from '../shard/selectors.js';

/** A point to write: its vectors by name and its whole payload. */
export interface PointInput {
  id: PointId;
  vectors: NamedVectors;
  payload: Payload;
}

/** A point's vectors by name; the unnamed vector is stored under DEFAULT_VECTOR. */
export function toNamedVectors(vector: WireVectorStruct): NamedVectors {
  if (Array.isArray(vector) || isInferenceInput(vector)) return { [DEFAULT_VECTOR]: vectorOf(vector) };
  // fromEntries makes every name a field, "__proto__" too (an assignment would set the prototype).
  return Object.fromEntries(Object.entries(vector).map(([name, value]) => [name, vectorOf(value)]));
}

/**
 * A dense vector becomes a Float32Array; a sparse one has its indices sorted, values alongside (as
 * Qdrant stores it); a document is embedded (src/api/inference.ts).
 */
function vectorOf(vector: WireVector): Vector {
  if (!Array.isArray(vector)) {
    if (isInferenceInput(vector)) return inferVector(vector, 'document');
    return toSparseVector(vector as WireSparseVector);
  }
  if (vector.some((element) => Array.isArray(element))) return toMultiVector(vector as number[][]);
  return new Float32Array(vector as number[]);
}

/**
 * A list of vectors (validated: at least one, none empty, all of one length) as one block of
 * rows. An empty list never gets here: it reads as an empty dense vector, as in Qdrant.
 */
export function toMultiVector(rows: number[][]): MultiVector {
  const dim = rows[0].length;
  const data = new Float32Array(rows.length * dim);
  rows.forEach((row, i) => data.set(row, i * dim));
  return { dim, data };
}

/** A sparse vector as sent (validated: equal lengths, distinct u32 indices) in Quiver's form. */
export function toSparseVector(vector: WireSparseVector): SparseVector {
  return normalizeSparse(vector);
}

/** The points of an upsert body, in either form. */
export function toPointInputs(body: WirePointInsertOperations): PointInput[] {
  if ('batch' in body) return batchPoints(body.batch);
  return body.points.map((point) => ({
    id: toPointId(point.id),
    vectors: toNamedVectors(point.vector),
    payload: point.payload ?? {},
  }));
}

function batchPoints(batch: WireBatch): PointInput[] {
  const { ids, vectors, payloads } = batch;
  const vectorsAt: (i: number) => NamedVectors = Array.isArray(vectors)
    ? (i) => ({ [DEFAULT_VECTOR]: vectorOf(vectors[i] as WireVector) })
    : (i) => Object.fromEntries(Object.entries(vectors).map(([name, column]) => [name, vectorOf(column[i])]));
  return ids.map((id, i) => ({ id: toPointId(id), vectors: vectorsAt(i), payload: payloads?.[i] ?? {} }));
}


/**
 * The selector's key paths, parsed. Qdrant reads them as JsonPaths inside the untagged
 * WithPayloadInterface, so one it cannot parse fails the whole selector.
 */
function selectorPaths(paths: string[]): JsonPath[] {
  return paths.map((text) => {
    const path = parseJsonPath(text);
    if (!path) throw formatError('data did not match any variant of untagged enum WithPayloadInterface');
    return path;
  });
}

/** Qdrant returns the whole payload unless told otherwise. */
export function toPayloadSelection(selector: WireWithPayload | null | undefined): PayloadSelection {
  if (selector === undefined || selector === null || selector === true) return { all: true };
  if (selector === false) return { all: false };
  if (Array.isArray(selector)) return { all: false, include: selectorPaths(selector) };
  if ('include' in selector) return { all: false, include: selectorPaths(selector.include) };
  return { all: true, exclude: selectorPaths(selector.exclude) };
}

/** Which vectors a read returns: all, none, or the named ones. Qdrant returns none by default. */
export function toVectorSelection(selector: WireWithVector | undefined): VectorSelection {
  return selector ?? false;
}


/** Qdrant's Record: the parts not asked for are left out (not null), as Qdrant does since 1.10. */
export interface WireRecord {
  id: PointId;
  payload?: Payload;
  vector?: number[] | number[][] | Record<string, WireVectorOutput>;
  shard_key?: string | number;
  order_value?: number | bigint;
}

export function renderRecord(point: PointView): WireRecord {
  const record: WireRecord = { id: point.id };
  if (point.payload !== undefined) record.payload = point.payload;
  if (point.vectors !== undefined) record.vector = renderVectors(point.vectors);
  if (point.shardKey !== undefined) record.shard_key = point.shardKey;
  if (point.orderValue !== undefined) record.order_value = point.orderValue;
  return record;
}

/** A lone unnamed vector (dense or multi) is written as it is, anything else as a map by name (as Qdrant). */
export function renderVectors(vectors: NamedVectors): number[] | number[][] | Record<string, WireVectorOutput> {
  const names = Object.keys(vectors);
  const only = vectors[DEFAULT_VECTOR];
  if (names.length === 1 && only !== undefined && !isSparse(only)) return renderVector(only) as number[] | number[][];
  return Object.fromEntries(names.map((name) => [name, renderVector(vectors[name])]));
}

/** Qdrant's VectorOutput: a dense vector as numbers, a sparse one as {indices, values}, a multivector as a list of lists. */
export type WireVectorOutput = number[] | number[][] | { indices: number[]; values: number[] };

function renderVector(vector: Vector): WireVectorOutput {
  if (isDense(vector)) return shortF32s(vector);
  if (isSparse(vector)) return { indices: Array.from(vector.indices), values: shortF32s(vector.values) };
  return Array.from({ length: multiCount(vector) }, (_, i) => shortF32s(vector.data.subarray(i * vector.dim, (i + 1) * vector.dim)));
}

