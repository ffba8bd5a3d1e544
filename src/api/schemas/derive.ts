// Qdrant judges a body in two steps: serde parses it (any mismatch: 400), then the validator
// crate checks rules on the parsed value (every broken rule: 422, all listed). Each request schema
// is written once, with its rules inline; these functions derive the schema of each step.
//
// The shape schema drops the rules. The rules schema keeps only the parts that lead to a rule and
// replaces each untagged enum by an if/then chain over its variants' shapes, so the variant serde
// would pick is the one whose rules are checked.

import type { SchemaObject } from 'ajv';
import type { Schema } from './builders.js';
import type { RuleSpec } from './rules.js';

/** How each step from the root to a rule's value is named in Qdrant's error path. */
export type PathStep = 'field' | 'key' | 'index';

export type PlacedRule = RuleSpec & { path: PathStep[] };

export function shapeOf(schema: Schema): Schema {
  if (typeof schema === 'boolean') return schema;
  const { rule: _rule, rulesRef: _rulesRef, ...rest } = schema;
  return mapChildren(rest, shapeOf);
}

/**
 * A reference to a registered schema whose rules are registered too, as `rulesId`: a schema
 * that nests itself (a prefetch) can only be checked through references.
 */
export function ruledRef(id: string, rulesId: string): SchemaObject {
  return { $ref: id, rulesRef: rulesId };
}

/** The rules schema, or true when `schema` holds no rule at all. */
export function rulesOf(schema: Schema, path: PathStep[] = []): Schema {
  if (typeof schema === 'boolean' || !hasRule(schema)) return true;
  if (typeof schema.rulesRef === 'string') return { $ref: schema.rulesRef };
  const out: SchemaObject = {};
  if (schema.rule) out.rule = { ...schema.rule, path } satisfies PlacedRule;
  if (schema.properties) {
    const properties: Record<string, Schema> = {};
    for (const [name, sub] of Object.entries(schema.properties as Record<string, Schema>)) {
      const derived = rulesOf(sub, [...path, 'field']);
      if (derived !== true) properties[name] = derived;
    }
    if (Object.keys(properties).length > 0) out.properties = properties;
  }
  if (schema.additionalProperties !== undefined) keep(out, 'additionalProperties', rulesOf(schema.additionalProperties, [...path, 'key']));
  if (schema.items !== undefined) keep(out, 'items', rulesOf(schema.items, [...path, 'index']));
  const parts = ((schema.allOf ?? []) as Schema[]).map((sub) => rulesOf(sub, path));
  if (schema.anyOf) parts.push(variantChain(schema.anyOf as Schema[], path));
  const ruled = parts.filter((part) => part !== true);
  if (ruled.length > 0) out.allOf = ruled;
  if (schema.if !== undefined) {
    const then = schema.then === undefined ? true : rulesOf(schema.then, path);
    const otherwise = schema.else === undefined ? true : rulesOf(schema.else, path);
    if (then !== true || otherwise !== true) Object.assign(out, { if: shapeOf(schema.if), then, else: otherwise });
  }
  if (Object.keys(out).length === 0) return true;
  // Ajv's strict types want the type next to properties/items; the shape step already proved it.
  if (schema.type !== undefined) out.type = schema.type;
  return out;
}

function variantChain(variants: Schema[], path: PathStep[]): Schema {
  let chain: Schema = true;
  for (const variant of [...variants].reverse()) {
    const then = rulesOf(variant, path);
    // Telling apart variants that hold no rule, with nothing ruled after them, gains nothing.
    if (then === true && chain === true) continue;
    chain = { if: shapeOf(variant), then, else: chain };
  }
  return chain;
}

function keep(out: SchemaObject, keyword: string, derived: Schema): void {
  if (derived !== true) out[keyword] = derived;
}

function hasRule(schema: Schema): boolean {
  if (typeof schema === 'boolean') return false;
  return schema.rule !== undefined || schema.rulesRef !== undefined || subschemas(schema).some(hasRule);
}

// The keywords of Quiver's schemas that hold one subschema, and those that hold a list of them.
const SINGLE = ['additionalProperties', 'items', 'if', 'then', 'else', 'not'] as const;
const LISTS = ['anyOf', 'allOf', 'oneOf'] as const;

function subschemas(schema: SchemaObject): Schema[] {
  return [
    ...SINGLE.flatMap((keyword) => (schema[keyword] === undefined ? [] : [schema[keyword] as Schema])),
    ...LISTS.flatMap((keyword) => (schema[keyword] ?? []) as Schema[]),
    ...Object.values((schema.properties ?? {}) as Record<string, Schema>),
  ];
}

/** Applies `fn` to every direct subschema of `schema`, keeping everything else as is. */
function mapChildren(schema: SchemaObject, fn: (child: Schema) => Schema): SchemaObject {
  const out: SchemaObject = { ...schema };
  for (const keyword of SINGLE) {
    if (schema[keyword] !== undefined) out[keyword] = fn(schema[keyword]);
  }
  for (const keyword of LISTS) {
    if (schema[keyword]) out[keyword] = (schema[keyword] as Schema[]).map(fn);
  }
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Schema>).map(([name, sub]) => [name, fn(sub)]),
    );
  }
  return out;
}
