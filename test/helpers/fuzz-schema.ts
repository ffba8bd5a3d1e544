// Well-formed request bodies drawn from the server's own body schemas (src/api/validator.ts), for
// the request fuzzer to send as they are or to break. Only the schema keywords the request schemas
// use are read; the rules (422 checks) are ignored, so a generated body may still break one.
// Strings come from the fixture's own vocabulary (collection, vector and payload names, ids)
// mixed with odd ones, so that bodies reach the code behind validation.

import fc from 'fast-check';
import type { SchemaObject } from 'ajv';
import { oddString } from './fuzz-values.js';

/** What the generated bodies may refer to, so that many of them name things that exist. */
export interface Vocabulary {
  /** Collection, alias, vector and payload names, snapshot names, datetimes... */
  words: readonly string[];
  pointIds: readonly (number | string)[];
}

type Schema = SchemaObject | boolean;

/** Past this many references followed (nested filters, prefetches), only the minimal form of a body part is drawn. */
const MAX_REF_DEPTH = 3;
const MAX_ITEMS = 4;
const MAX_OPTIONAL = 2;

export class BodyGenerator {
  private readonly memo = new Map<Schema, Map<string, fc.Arbitrary<unknown>>>();
  private readonly byId: Map<string, SchemaObject>;
  private readonly word: fc.Arbitrary<string>;
  private readonly pointId: fc.Arbitrary<number | string>;

  constructor(referenced: readonly SchemaObject[], vocabulary: Vocabulary) {
    this.byId = new Map(referenced.map((s) => [String(s.$id), s]));
    this.word = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...vocabulary.words) }, { weight: 1, arbitrary: oddString });
    this.pointId = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...vocabulary.pointIds) },
      { weight: 1, arbitrary: fc.oneof(fc.nat(1000), fc.uuid()) },
    );
  }

  /** Bodies that fit `schema` in shape. */
  body(schema: SchemaObject): fc.Arbitrary<unknown> {
    return this.of(schema, schema, 0);
  }

  private of(schema: Schema, root: SchemaObject, depth: number): fc.Arbitrary<unknown> {
    const key = `${depth}:${String(root.$id ?? '')}`;
    let byKey = this.memo.get(schema);
    if (!byKey) this.memo.set(schema, (byKey = new Map()));
    let arbitrary = byKey.get(key);
    if (!arbitrary) {
      // A placeholder first: a schema reached again while its own arbitrary is being built is a recursion, drawn lazily.
      arbitrary = fc.constant(null).chain(() => byKey!.get(key)!);
      byKey.set(key, arbitrary);
      const built = this.build(schema, root, depth);
      byKey.set(key, built);
      arbitrary = built;
    }
    return arbitrary;
  }

  private build(schema: Schema, root: SchemaObject, depth: number): fc.Arbitrary<unknown> {
    if (schema === true) return fc.jsonValue({ maxDepth: 2 });
    if (schema === false) return fc.constant(null);
    if (typeof schema.$ref === 'string') return this.ref(schema.$ref, root, depth);
    if (schema.pointId === true) return this.pointId;
    if (Array.isArray(schema.anyOf)) return this.variants(schema.anyOf as Schema[], root, depth);
    if (schema.if !== undefined) {
      // opt(T) is { if: null, else: T }; a keyed variant is { if: has key, then: variant, else: the others }.
      const then = schema.then === undefined ? fc.constant(null) : this.of(schema.then, root, depth);
      return fc.oneof(then, this.of(schema.else ?? true, root, depth));
    }
    if (Array.isArray(schema.allOf)) {
      const structural = (schema.allOf as Schema[]).find((s) => typeof s === 'object' && (s.type !== undefined || s.anyOf !== undefined || s.if !== undefined));
      return this.of(structural ?? true, root, depth);
    }
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    const types = [schema.type ?? []].flat() as string[];
    if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
    return fc.oneof(...types.map((type) => this.typed(type, schema, root, depth)));
  }

  private ref(ref: string, root: SchemaObject, depth: number): fc.Arbitrary<unknown> {
    // `Id#/definitions/Name` is a definition of the schema registered as `Id` (Filter's Condition).
    const [id, pointer] = ref.split('#');
    const base = id === '' ? root : this.byId.get(id);
    const target = pointer?.startsWith('/definitions/') ? (base?.definitions as Record<string, SchemaObject> | undefined)?.[pointer.slice('/definitions/'.length)] : base;
    if (!target) throw new Error(`fuzz: unknown schema reference ${ref}`);
    const nextRoot = id === '' ? root : base!;
    // Every referenced schema (Filter, Condition, Prefetch) accepts an empty object.
    if (depth >= MAX_REF_DEPTH) return fc.constant({});
    return this.of(target, nextRoot, depth + 1);
  }

  private variants(branches: Schema[], root: SchemaObject, depth: number): fc.Arbitrary<unknown> {
    const usable = depth >= MAX_REF_DEPTH ? branches.filter((b) => typeof b !== 'object' || b.$ref === undefined) : branches;
    return fc.oneof(...usable.map((b) => this.of(b, root, depth)));
  }

  private typed(type: string, schema: SchemaObject, root: SchemaObject, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer': {
        const min = typeof schema.minimum === 'number' ? schema.minimum : -10;
        const max = typeof schema.maximum === 'number' ? Math.min(schema.maximum, Number.MAX_SAFE_INTEGER) : 100;
        // Mostly small counts (limits, sizes), the bounds now and then.
        const low = Math.min(Math.max(min, 1), max);
        return fc.oneof({ weight: 6, arbitrary: fc.integer({ min: low, max: Math.min(max, low + 10) }) }, { weight: 1, arbitrary: fc.constantFrom(min, max) });
      }
      case 'number': {
        const min = typeof schema.minimum === 'number' ? schema.minimum : -10;
        const max = typeof schema.maximum === 'number' ? schema.maximum : 10;
        return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
      }
      case 'string':
        if (typeof schema.pattern === 'string') return fc.uuid();
        return typeof schema.minLength === 'number' ? this.word.filter((s) => s.length >= (schema.minLength as number)) : this.word;
      case 'array': {
        const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
        const items = schema.items ?? true;
        // Lists of numbers are mostly vectors: the fixture's have 2 to 4 dimensions.
        const vectorLike = typeof items === 'object' && items.type === 'number';
        return fc.array(this.of(items, root, depth), { minLength: vectorLike ? Math.max(minLength, 2) : minLength, maxLength: Math.max(minLength, MAX_ITEMS) });
      }
      case 'object':
        return this.object(schema, root, depth);
      default:
        throw new Error(`fuzz: schema type ${type} not handled`);
    }
  }

  private object(schema: SchemaObject, root: SchemaObject, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = ((schema.required ?? []) as string[]).filter((name) => name in properties);
    const optional = Object.keys(properties).filter((name) => !required.includes(name));
    const fields = Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, this.of(sub, root, depth)]));
    // Few optional fields at once: each is one more chance to be refused before the body is used.
    const record = fc.tuple(fc.record(fields), fc.subarray(optional, { maxLength: Math.min(MAX_OPTIONAL, optional.length) })).map(([all, chosen]) =>
      Object.fromEntries([...required, ...chosen].map((name) => [name, all[name]])));
    const extra = schema.additionalProperties;
    if (extra === undefined || extra === false) return record;
    const entries = fc.dictionary(this.word, this.of(extra as Schema, root, depth), { maxKeys: MAX_ITEMS });
    return fc.tuple(record, entries).map(([fixed, more]) => ({ ...more, ...fixed }));
  }
}
