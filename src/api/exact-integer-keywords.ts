// Schema keywords that put the exact values of long integer literals into a validated body, where
// Qdrant keeps integers exactly (serde_json's i64/u64) and JSON.parse has rounded them:
// - `exactIntegers` on a JSON object of any values (a payload, formula defaults): every integer
//   in it takes its one form (src/json/integers.ts), a bigint beyond 2^53;
// - `i64` on a number Qdrant reads as an i64 (a match value, an `any`/`except` item, an integer
//   `start_from`): the exact value, and no match for an integer outside i64, as serde refuses it
//   (an untagged enum then tries its next variant, as serde does).
// The exact digits come from the body's text (exact-integers.ts), scanned only when such a number
// is met; a body built in code means the doubles it holds.

import type { ErrorObject, FuncKeywordDefinition } from 'ajv';
import { I64_MAX, I64_MIN, integerValue, withExactIntegers } from '../json/integers.js';
import { exactIntegerAt } from './exact-integers.js';

interface DataContext {
  instancePath: string;
  parentData: Record<string | number, unknown>;
  parentDataProperty: string | number;
  rootData: unknown;
}

function exactIntegers(_: boolean, data: unknown, _parent?: unknown, cxt?: DataContext): boolean {
  if (typeof data === 'object' && data !== null && cxt) {
    withExactIntegers(data, cxt.instancePath, (pointer) => exactIntegerAt(cxt.rootData, pointer));
  }
  return true;
}

/** The `exactIntegers` keyword: never fails, only replaces rounded integers by their exact values. */
export const EXACT_INTEGERS_KEYWORD: FuncKeywordDefinition = {
  keyword: 'exactIntegers',
  schemaType: 'boolean',
  modifying: true,
  validate: exactIntegers,
};

function validateI64(_: boolean, data: unknown, _parent?: unknown, cxt?: DataContext): boolean {
  // A bigint was put here by an earlier pass over the same body (another variant tried).
  if (typeof data === 'bigint') return data >= I64_MIN && data <= I64_MAX;
  if (typeof data !== 'number' || !Number.isInteger(data)) return refuse(data);
  if (Number.isSafeInteger(data)) return true;
  const exact = (cxt && exactIntegerAt(cxt.rootData, cxt.instancePath)) ?? BigInt(data);
  if (exact < I64_MIN || exact > I64_MAX) return refuse(data);
  if (cxt) cxt.parentData[cxt.parentDataProperty] = integerValue(exact);
  return true;
}
validateI64.errors = undefined as Partial<ErrorObject>[] | undefined;

function refuse(data: unknown): false {
  validateI64.errors = [{ keyword: 'i64', params: {}, data, message: 'expected i64' }];
  return false;
}

/** The `i64` keyword: an integer within i64, exactly as written. */
export const I64_KEYWORD: FuncKeywordDefinition = {
  keyword: 'i64',
  schemaType: 'boolean',
  modifying: true,
  errors: true,
  validate: validateI64,
};
