// Seeded random payloads and wire filters for filter tests, and a FilterSource over an array of
// points (holes = deleted offsets) that keeps payload indexes in step with its points.

import { Bitset } from '../../src/engine/bitset.js';
import { createPayloadIndex, type IndexSchema, type PayloadIndex } from '../../src/shard/payload-index/index.js';
import type { FilterSource } from '../../src/shard/filter/index.js';
import type { JsonValue, Payload, PointId } from '../../src/model.js';
import type { RefPoint } from './filter-reference.js';

export type Rng = () => number;

export function pick<T>(next: Rng, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)];
}

function chance(next: Rng, p: number): boolean {
  return next() < p;
}

function int(next: Rng, lo: number, hi: number): number {
  return lo + Math.floor(next() * (hi - lo + 1));
}

function some<T>(next: Rng, max: number, make: () => T): T[] {
  return Array.from({ length: int(next, 0, max) }, make);
}

export const WORDS = ['red', 'green', 'blue', 'Red', 're', 'red green', ''];
export const UUIDS = [
  '550e8400-e29b-41d4-a716-446655440000',
  '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  'f47ac10b-58cc-4372-a567-0e02b2c3d479',
  '00000000-0000-0000-0000-000000000001',
];
export const DATETIMES = [
  '2024-01-01T00:00:00Z',
  '2024-01-01T01:00:00+01:00',
  '2024-01-01 12:30:00',
  '2024-03-15',
  '2024-06-30T23:59:59.999Z',
  '2023-12-31T23:00:00-02:00',
  '2024-02-29T12:00:00.500Z',
];
export const SENTENCES = ['the quick brown fox', 'Quick red fox', 'lazy dog', 'brown dog jumps', 'red-green blue', 'Fox', 'dog and fox'];
const TEXT_WORDS = ['fox', 'quick', 'brown', 'dog', 'red', 'green', 'blue', 'the', 'lazy', 'Fox', 'cat'];

function scalar(next: Rng): JsonValue {
  return pick(next, [int(next, -3, 3), pick(next, WORDS), chance(next, 0.5), null, 1.5, pick(next, UUIDS)]);
}

function geoPoint(next: Rng): JsonValue {
  if (chance(next, 0.05)) return { lon: 200, lat: 45 };
  if (chance(next, 0.05)) return { lon: 'x', lat: 1 };
  return { lon: Math.round(next() * 1000) / 100, lat: 40 + Math.round(next() * 1000) / 100, name: 'p' };
}

/** One point's payload: each key present most of the time, with values of varied shapes. */
export function randomPayload(next: Rng): Payload {
  const p: Payload = {};
  const put = (key: string, prob: number, make: () => JsonValue): void => {
    if (chance(next, prob)) p[key] = make();
  };
  put('int', 0.85, () => pick(next, [int(next, -3, 3), int(next, -3, 3), some(next, 3, () => int(next, -3, 3)), 2.5, null, '1', [1, [2]]]));
  put('float', 0.85, () => pick(next, [Math.round(next() * 40 - 20) / 10, int(next, -2, 2), some(next, 3, () => Math.round(next() * 40 - 20) / 10)]));
  put('str', 0.85, () => pick(next, [pick(next, WORDS), pick(next, WORDS), some(next, 3, () => pick(next, WORDS)), null, 1]));
  put('bool', 0.8, () => pick(next, [true, false, [true, false], [false], null, 'true']));
  put('mixed', 0.9, () => (chance(next, 0.3) ? some(next, 4, () => scalar(next)) : scalar(next)));
  put('obj', 0.8, () => {
    const o: Payload = {};
    if (chance(next, 0.8)) o.a = pick(next, [int(next, -3, 3), [int(next, -3, 3), int(next, -3, 3)], null]);
    if (chance(next, 0.8)) o.b = pick(next, WORDS);
    if (chance(next, 0.7)) o.c = { d: int(next, -3, 3) };
    return chance(next, 0.1) ? [o] : o;
  });
  put('objs', 0.85, () => some(next, 3, () => (chance(next, 0.1) ? 5 : {
    x: pick(next, [int(next, -3, 3), int(next, -3, 3), [int(next, -3, 3), int(next, -3, 3)], null]),
    y: pick(next, [...WORDS, pick(next, SENTENCES)]),
    tags: some(next, 2, () => pick(next, WORDS)),
  })));
  put('nul', 0.8, () => pick(next, [null, [], [null], [null, 1], 1, [1, 2], {}]));
  put('arr', 0.85, () => some(next, 4, () => pick(next, ['a', 'b', null, 1])));
  put('uuid', 0.8, () => (chance(next, 0.3) ? some(next, 2, () => pick(next, UUIDS)) : pick(next, UUIDS)));
  put('dt', 0.85, () => (chance(next, 0.2) ? some(next, 2, () => pick(next, DATETIMES)) : pick(next, [...DATETIMES, 'not a date', 20240101])));
  put('geo', 0.85, () => (chance(next, 0.3) ? some(next, 3, () => geoPoint(next)) : geoPoint(next)));
  put('text', 0.85, () => (chance(next, 0.2) ? some(next, 2, () => pick(next, SENTENCES)) : pick(next, [...SENTENCES, 7])));
  return p;
}

export const VECTOR_NAMES = ['', 'image'];

export function randomPoints(next: Rng, n: number): RefPoint[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i % 5 === 4 ? pick(next, UUIDS).slice(0, -4) + String(1000 + i).slice(-4) : i * 3,
    payload: randomPayload(next),
    vectors: VECTOR_NAMES.filter(() => chance(next, 0.7)),
  }));
}

// ---- random wire filters ----

type WireCondition = { [key: string]: unknown };

function bounds(next: Rng, values: () => number | string): WireCondition {
  const b: WireCondition = {};
  for (const name of ['lt', 'gt', 'gte', 'lte']) if (chance(next, 0.4)) b[name] = values();
  if (chance(next, 0.1)) b.gt = null;
  return b;
}

function valueList(next: Rng): (string | number)[] {
  return chance(next, 0.5) ? some(next, 3, () => pick(next, WORDS)) : some(next, 3, () => int(next, -3, 3));
}

const MATCH_KEYS = ['int', 'str', 'bool', 'mixed', 'obj.a', 'obj.b', 'objs[].x', 'objs[0].y', 'objs[].tags', 'uuid', 'float', 'missing', 'obj', 'arr'];
const RANGE_KEYS = ['int', 'float', 'mixed', 'obj.c.d', 'objs[].x', 'str', 'obj.a'];
const SHAPE_KEYS = ['arr', 'int', 'str', 'nul', 'objs', 'missing', 'objs[].x', 'obj', 'obj.a', 'mixed'];

function fieldCondition(next: Rng, keys: { match: string[]; range: string[]; shape: string[]; text: string[] }): WireCondition {
  switch (int(next, 0, 11)) {
    case 0:
    case 1: {
      const value = pick(next, [int(next, -3, 3), pick(next, WORDS), chance(next, 0.5), pick(next, UUIDS)]);
      return { key: pick(next, keys.match), match: { value } };
    }
    case 2:
      return { key: pick(next, keys.match), match: chance(next, 0.5) ? { any: valueList(next) } : { except: valueList(next) } };
    case 3: {
      const words = some(next, 3, () => pick(next, TEXT_WORDS)).join(' ');
      const kind = pick(next, ['text', 'text_any', 'phrase']);
      return { key: pick(next, keys.text), match: { [kind]: chance(next, 0.1) ? '' : words } };
    }
    case 4:
      return { key: pick(next, ['str', 'text', 'mixed', 'objs[].y']), match: { prefix: pick(next, ['r', 're', 'Re', 'b', '', 'qu']) } };
    case 5:
      return { key: pick(next, keys.range), range: bounds(next, () => int(next, -30, 30) / 10) };
    case 6:
      return { key: pick(next, ['dt', 'str']), range: bounds(next, () => pick(next, DATETIMES)) };
    case 7:
      return { key: 'geo', ...geoCondition(next) };
    case 8:
      return { key: pick(next, keys.shape), values_count: bounds(next, () => int(next, 0, 3)) };
    case 9:
      return { key: pick(next, keys.shape), [pick(next, ['is_empty', 'is_null'])]: chance(next, 0.5) };
    case 10:
      return { key: pick(next, keys.match), match: { value: int(next, -3, 3) }, range: bounds(next, () => int(next, -3, 3)) };
    default:
      return chance(next, 0.5) ? { is_empty: { key: pick(next, keys.shape) } } : { is_null: { key: pick(next, keys.shape) } };
  }
}

function geoCondition(next: Rng): WireCondition {
  const lon = (): number => Math.round(next() * 1000) / 100;
  const lat = (): number => 40 + Math.round(next() * 1000) / 100;
  switch (int(next, 0, 2)) {
    case 0: {
      const [l1, l2] = [lon(), lon()].sort((a, b) => a - b);
      const [b1, b2] = [lat(), lat()].sort((a, b) => a - b);
      // Sometimes the other way round, which Qdrant reads as crossing the antimeridian.
      return { geo_bounding_box: chance(next, 0.2) ? { top_left: { lon: l2, lat: b2 }, bottom_right: { lon: l1, lat: b1 } } : { top_left: { lon: l1, lat: b2 }, bottom_right: { lon: l2, lat: b1 } } };
    }
    case 1:
      return { geo_radius: { center: { lon: lon(), lat: lat() }, radius: next() * 600_000 } };
    default: {
      const cx = lon();
      const cy = lat();
      const ring = (r: number): { lon: number; lat: number }[] => {
        const pts = [0, 1, 2, 3, 4].map((k) => ({ lon: cx + r * Math.cos((k * 2 * Math.PI) / 5 + 0.3), lat: cy + r * Math.sin((k * 2 * Math.PI) / 5 + 0.3) }));
        return [...pts, pts[0]];
      };
      const r = 1 + next() * 4;
      return { geo_polygon: { exterior: { points: ring(r) }, interiors: chance(next, 0.5) ? [{ points: ring(r / 3) }] : null } };
    }
  }
}

const TOP_KEYS = { match: MATCH_KEYS, range: RANGE_KEYS, shape: SHAPE_KEYS, text: ['text', 'str', 'objs[].y', 'mixed'] };
const NESTED_KEYS = { match: ['x', 'y', 'tags'], range: ['x'], shape: ['x', 'tags', 'y'], text: ['y'] };

export function condition(next: Rng, depth: number, nested: boolean, ids: PointId[]): WireCondition {
  const r = next();
  if (depth > 0 && r < 0.12) return filter(next, depth - 1, nested, ids);
  if (!nested && depth > 0 && r < 0.22) return { nested: { key: pick(next, ['objs', 'objs[]']), filter: filter(next, depth - 1, true, ids) } };
  if (r < 0.28) return { has_id: some(next, 4, () => pick(next, ids)) };
  if (r < 0.32) return { has_vector: pick(next, ['', 'image', 'nope']) };
  if (r < 0.35) return { slice: { total: int(next, 1, 4), index: 0 } };
  return fieldCondition(next, nested ? NESTED_KEYS : TOP_KEYS);
}

function conditions(next: Rng, depth: number, nested: boolean, ids: PointId[]): WireCondition | WireCondition[] {
  const list = some(next, 3, () => condition(next, depth, nested, ids));
  return list.length === 1 && chance(next, 0.5) ? list[0] : list;
}

/** A random wire filter up to `depth` levels of sub-filters and nested conditions. */
export function filter(next: Rng, depth: number, nested: boolean, ids: PointId[]): WireCondition {
  const f: WireCondition = {};
  if (chance(next, 0.6)) f.must = conditions(next, depth, nested, ids);
  if (chance(next, 0.35)) f.should = conditions(next, depth, nested, ids);
  if (chance(next, 0.3)) f.must_not = conditions(next, depth, nested, ids);
  if (chance(next, 0.15)) {
    const list = some(next, 4, () => condition(next, depth, nested, ids));
    f.min_should = { conditions: list, min_count: int(next, 1, 3) };
  }
  return f;
}

// ---- a FilterSource for tests ----

export class ArraySource implements FilterSource {
  private readonly indexes = new Map<string, PayloadIndex>();
  /** How many conditions an index answered (so tests can tell indexes were used). */
  answered = 0;

  /** Holes (undefined) are deleted offsets. */
  constructor(readonly points: (RefPoint | undefined)[]) {}

  get size(): number {
    return this.points.length;
  }
  liveOffsets(): Bitset {
    const live = new Bitset(this.size);
    this.points.forEach((p, offset) => p && live.add(offset));
    return live;
  }
  payload(offset: number): Payload | undefined {
    return this.points[offset]?.payload;
  }
  pointId(offset: number): PointId {
    return this.points[offset]!.id;
  }
  hasVector(offset: number, name: string): boolean {
    return this.points[offset]?.vectors.includes(name) ?? false;
  }
  offsetOf(id: PointId): number | undefined {
    const offset = this.points.findIndex((p) => p?.id === id);
    return offset < 0 ? undefined : offset;
  }
  index(key: string): PayloadIndex | undefined {
    return this.indexes.get(key);
  }

  addIndex(key: string, schema: IndexSchema): PayloadIndex {
    const index = createPayloadIndex(key, schema);
    this.points.forEach((p, offset) => p && index.add(offset, p.payload));
    const select = index.select.bind(index);
    index.select = (condition, size) => {
      const answer = select(condition, size);
      if (answer) this.answered++;
      return answer;
    };
    this.indexes.set(index.key, index);
    return index;
  }

  /** Replaces (or with undefined deletes) the point at an offset, keeping indexes in step. */
  put(offset: number, point: RefPoint | undefined): void {
    this.points[offset] = point;
    for (const index of this.indexes.values()) {
      if (point) index.add(offset, point.payload);
      else index.remove(offset);
    }
  }
}
