// The `pointId` schema keyword: whether a value is an ExtendedPointId (an integer 0..2^64-1 or a
// UUID), and, for an integer past 2^53, the one place its exact value is put into the body.
// JSON.parse reads 18446744073709551615 as the double 2^64, so a number in an id position that
// may have been rounded is looked up in the body's text (exact-integers.ts) and replaced by the
// bigint it was written as; every other number and every smaller id is left as it is.

import type { ErrorObject, FuncKeywordDefinition } from 'ajv';
import { exactIntegerAt } from './exact-integers.js';
import { isPointId, MAX_NUMERIC_ID } from './point-id.js';

/**
 * What the keyword's failure reports besides the value itself: the exact integer, when serde_json
 * would have read it as one (an i64 below -2^53) and so Qdrant shows all its digits.
 */
export interface PointIdErrorParams {
  exact?: bigint;
}

interface DataContext {
  instancePath: string;
  parentData: Record<string | number, unknown>;
  parentDataProperty: string | number;
  rootData: unknown;
}

// serde_json reads an integer literal as i64 or u64 when it fits, as f64 otherwise.
const I64_MIN = -(2n ** 63n);

function validatePointId(_: boolean, data: unknown, _parent?: unknown, cxt?: DataContext): boolean {
  if (typeof data === 'number' && mayBeRounded(data)) return exactId(data, cxt);
  if (isPointId(data)) return true;
  return refuse(data, {});
}
validatePointId.errors = undefined as Partial<ErrorObject>[] | undefined;

/** An integer a double holds inexactly or that is the rounding of one: 2^53 up to 2^64 (either sign). */
function mayBeRounded(value: number): boolean {
  const magnitude = Math.abs(value);
  return magnitude > Number.MAX_SAFE_INTEGER && magnitude <= 2 ** 64 && Number.isInteger(value);
}

function exactId(data: number, cxt: DataContext | undefined): boolean {
  // A body built in code, not parsed from text, means the double's own value.
  const exact = (cxt && exactIntegerAt(cxt.rootData, cxt.instancePath)) ?? BigInt(data);
  if (exact >= 0n && exact <= MAX_NUMERIC_ID) {
    if (cxt) cxt.parentData[cxt.parentDataProperty] = exact;
    return true;
  }
  // Qdrant shows what serde_json read: an integer when it fits i64, the double otherwise.
  return refuse(data, exact >= I64_MIN && exact < 0n ? { exact } : {});
}

// Runs for every branch an untagged enum tries, so the message is worded only if reported.
function refuse(data: unknown, params: PointIdErrorParams): false {
  validatePointId.errors = [{ keyword: 'pointId', params, data }];
  return false;
}

/** The keyword's definition, for every Ajv instance that compiles schemas holding it. */
export const POINT_ID_KEYWORD: FuncKeywordDefinition = {
  keyword: 'pointId',
  schemaType: 'boolean',
  modifying: true,
  errors: true,
  validate: validatePointId,
};
