// Small constructors for Quiver's request schemas. Each mirrors one serde shape of Qdrant, so a
// schema reads like the Rust type it stands for, and carries the annotations the validator needs
// to word its errors as serde and the validator crate do:
//   serde     - what serde names the expected type ("u64", "a sequence", "struct VectorParams")
//   untagged  - on an anyOf: the name of the untagged enum it stands for
//   expecting - on an anyOf: serde's `expecting` text, which replaces the untagged enum's message
//   rule      - a validator-crate rule (HTTP 422), checked only once the body has the right shape
//   jsonPath  - on a string: Qdrant's JsonPath, whose deserializer refuses a key it cannot parse
//   datetime  - on a string: a datetime as Qdrant parses one (a variant of StartFrom)
//   exactIntegers, i64 - integers exact past 2^53 (src/api/exact-integer-keywords.ts)

import type { SchemaObject } from 'ajv';
import type { RuleSpec } from './rules.js';

export type Schema = SchemaObject | boolean;

const UINT_MAX = { u8: 255, u32: 4_294_967_295, u64: 2 ** 64 - 1, usize: 2 ** 64 - 1 } as const;
export type UintKind = keyof typeof UINT_MAX;

export function uint(kind: UintKind): SchemaObject {
  return { type: 'integer', minimum: 0, maximum: UINT_MAX[kind], serde: kind };
}

export function float(kind: 'f32' | 'f64'): SchemaObject {
  return { type: 'number', serde: kind };
}

/** serde's NonZeroU32/NonZeroU64: zero is a deserialization error (400), not a validation one (422). */
export function nonZero(kind: 'u32' | 'u64'): SchemaObject {
  return { ...uint(kind), minimum: 1, serde: `a nonzero ${kind}` };
}

export function bool(): SchemaObject {
  return { type: 'boolean', serde: 'a boolean' };
}

export function str(): SchemaObject {
  return { type: 'string', serde: 'a string' };
}

/** Qdrant's JsonPath: a payload key, read as a string and then parsed (failure: 400). */
export function jsonPath(): SchemaObject {
  return { ...str(), jsonPath: true };
}

/** A Rust enum of unit variants, written as plain strings. */
export function unitEnum(values: readonly string[]): SchemaObject {
  return { type: 'string', enum: [...values], serde: 'enum' };
}

export function seq(items: Schema): SchemaObject {
  return { type: 'array', items, serde: 'a sequence' };
}

/**
 * Vec<f32>, checked by one loop over the list (the validator's f32Items keyword) rather than a
 * subschema per item: a vector of a thousand numbers is the bulk of most upserts, and walking it
 * item by item through the generic machinery cost about 40 ns a number.
 */
export function f32Seq(): SchemaObject {
  return { type: 'array', f32Items: true, serde: 'a sequence' };
}

export function map(values: Schema): SchemaObject {
  return { type: 'object', additionalProperties: values, serde: 'a map' };
}

/** A JSON object of arbitrary values (Qdrant's Payload). */
export function jsonObject(): SchemaObject {
  return map(true);
}

/** A JSON object whose integers are kept as serde_json keeps them (a payload and what stands for one). */
export function exactObject(): SchemaObject {
  return { ...jsonObject(), exactIntegers: true };
}

interface StructOptions {
  required?: string[];
  /** serde(deny_unknown_fields): only Filter and the payload selectors have it among requests. */
  denyUnknown?: boolean;
  /** serde(alias): other names a field is read under, alias -> field (sending both is a duplicate field). */
  aliases?: Record<string, string>;
}

export function struct(name: string, properties: Record<string, Schema>, options: StructOptions = {}): SchemaObject {
  const schema: SchemaObject = { type: 'object', properties, serde: `struct ${name}` };
  if (options.required?.length) schema.required = options.required;
  if (options.denyUnknown) schema.additionalProperties = false;
  if (options.aliases) schema.aliases = options.aliases;
  return schema;
}

export function untagged(name: string, branches: Schema[]): SchemaObject {
  return { anyOf: branches, untagged: name };
}

/**
 * A body whose variant is chosen by which key it holds (Qdrant deserializes these by hand, so
 * errors inside the chosen variant surface as they are). Without any of the keys it fails as the
 * untagged enum `name` would.
 */
export function byKey(name: string, cases: Array<[key: string, schema: Schema]>): SchemaObject {
  let chain: Schema = untagged(name, cases.map(([, schema]) => schema));
  for (const [key, schema] of [...cases].reverse()) {
    chain = { if: { type: 'object', properties: { [key]: true }, required: [key] }, then: schema, else: chain };
  }
  return chain as SchemaObject;
}

/** A struct of one required field `key`: the JSON of serde's externally tagged enum variant. */
export function tagged(name: string, key: string, body: Schema): SchemaObject {
  return struct(name, { [key]: body }, { required: [key] });
}

/** Option<T>: null or T. */
export function opt(schema: Schema): Schema {
  if (typeof schema === 'boolean') return schema;
  if (typeof schema.type === 'string') {
    const nullable: SchemaObject = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) nullable.enum = [...schema.enum, null];
    return nullable;
  }
  return { if: { type: 'null' }, else: schema };
}

export function withRule(schema: SchemaObject, rule: RuleSpec): SchemaObject {
  return { ...schema, rule };
}

/** A further rule on a schema that may hold one already (a bound of Quiver's over Qdrant's rule). */
export function andRule(schema: SchemaObject, rule: RuleSpec): SchemaObject {
  return { allOf: [schema, { rule }] };
}

/** The filter schema is another module's; it registers itself under this id. */
export const FILTER: SchemaObject = { $ref: 'Filter' };
