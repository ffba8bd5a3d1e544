// Which parts of a point a read returns (Qdrant's with_payload / with_vector, internal form),
// and the point as a read found it.

import type { NamedVectors, Payload, PointId } from '../model.js';
import { excludePaths, includePaths } from './payload-path.js';
import type { JsonPath } from './filter/json-path.js';
import { ownField, setOwnField } from '../own-fields.js';
import { charge, chargePayloadRead, namedVectorsBytes } from './hardware.js';

/** all=false without include: no payload; include: only those paths; exclude: all but those. */
export interface PayloadSelection {
  all: boolean;
  include?: JsonPath[];
  exclude?: JsonPath[];
}

/** All vectors, none, or the named ones. */
export type VectorSelection = boolean | string[];

/** A point as a read found it; absent parts were not asked for. */
export interface PointView {
  id: PointId;
  payload?: Payload;
  vectors?: NamedVectors;
  shardKey?: string | number;
  /** What order_by sorted by: an integer past 2^53 is a bigint (src/json/integers.ts). */
  orderValue?: number | bigint;
}

/** The selected part of a stored payload; reading it (whole) is counted, as Qdrant counts it. */
export function selectPayload(payload: Payload, selection: PayloadSelection): Payload | undefined {
  if (!selection.include && !selection.all) return undefined;
  chargePayloadRead(payload);
  if (selection.include) return includePaths(payload, selection.include);
  return selection.exclude ? excludePaths(payload, selection.exclude) : payload;
}

/** The selected stored vectors; reading them is counted. */
export function selectVectors(vectors: NamedVectors, selection: VectorSelection): NamedVectors | undefined {
  const selected = pickVectors(vectors, selection);
  if (selected) charge('vector_io_read', namedVectorsBytes(selected));
  return selected;
}

function pickVectors(vectors: NamedVectors, selection: VectorSelection): NamedVectors | undefined {
  if (selection === false) return undefined;
  if (selection === true) return vectors;
  const out: NamedVectors = {};
  for (const name of selection) {
    const vector = ownField(vectors, name);
    if (vector) setOwnField(out, name, vector);
  }
  return out;
}

/** The parts of each point a read returns. */
export interface ReadShape {
  withPayload: PayloadSelection;
  withVector: VectorSelection;
}
