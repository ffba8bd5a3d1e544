// A deliberately plain reference for Qdrant's filter semantics, working on wire filters and
// payload JSON directly, written from Qdrant's documented and observed behaviour rather than
// from Quiver's modules. Only the key forms the tests use are understood: `a`, `a.b`, `a[]`,
// `a[0]`. Datetimes are read with Date.parse behind a strict pattern (the tests only produce
// millisecond precision). The full-text rules assume a text index with default parameters.

import siphash from 'siphash';
import type { JsonValue, PointId } from '../../src/model.js';

type Obj = { [key: string]: JsonValue };
// Wire JSON is read loosely here on purpose: the reference trusts the tests' own filters.
type Wire = { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface RefPoint {
  id: PointId;
  payload: Obj;
  vectors: string[];
}

export interface RefOptions {
  /** Keys carrying a default text index: full-text rules apply to their text conditions. */
  textKeys?: ReadonlySet<string>;
}

interface Ctx {
  payload: Obj;
  /** Undefined inside nested conditions, where id and vector conditions never hold. */
  point?: RefPoint;
  prefix: string;
  opts: RefOptions;
}

export function refMatches(filter: object, point: RefPoint, opts: RefOptions = {}): boolean {
  return refFilter(filter as Wire, { payload: point.payload, point, prefix: '', opts });
}

function asList(x: unknown): Wire[] | null {
  if (x === null || x === undefined) return null;
  return Array.isArray(x) ? x : [x as Wire];
}

function refFilter(f: Wire, ctx: Ctx): boolean {
  const must = asList(f.must);
  const should = asList(f.should);
  const mustNot = asList(f.must_not);
  if (must && !must.every((c) => refCondition(c, ctx))) return false;
  // An empty `should` list lets nothing through: none of its conditions holds.
  if (should && !should.some((c) => refCondition(c, ctx))) return false;
  if (mustNot && mustNot.some((c) => refCondition(c, ctx))) return false;
  if (f.min_should) {
    const hits = (f.min_should.conditions as Wire[]).filter((c) => refCondition(c, ctx)).length;
    if (hits < f.min_should.min_count) return false;
  }
  return true;
}

function refCondition(c: Wire, ctx: Ctx): boolean {
  if ('key' in c) return refField(c, ctx);
  if ('is_empty' in c) return valuesOf(c.is_empty.key, ctx.payload).every((v) => v === null || (Array.isArray(v) && v.length === 0));
  if ('is_null' in c) return valuesOf(c.is_null.key, ctx.payload).some((v) => v === null);
  if ('has_id' in c) return ctx.point !== undefined && (c.has_id as PointId[]).map(normId).includes(ctx.point.id);
  if ('has_vector' in c) return ctx.point !== undefined && ctx.point.vectors.includes(c.has_vector);
  if ('slice' in c) return ctx.point !== undefined && refSlice(ctx.point.id, c.slice.total) === c.slice.index;
  if ('nested' in c) {
    const key = c.nested.key.endsWith('[]') ? c.nested.key : `${c.nested.key}[]`;
    return valuesOf(key, ctx.payload).some((el) => isObj(el)
      && refFilter(c.nested.filter, { payload: el, prefix: ctx.prefix + key + '.', opts: ctx.opts }));
  }
  return refFilter(c, ctx);
}

function normId(id: PointId): PointId {
  return typeof id === 'string' ? id.toLowerCase() : id;
}

function isObj(v: JsonValue | undefined): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Values at a simple key: `.name` into objects, `[]` over elements, `[N]` one element. */
export function valuesOf(key: string, root: Obj): JsonValue[] {
  let current: JsonValue[] = [root];
  for (const part of key.split('.')) {
    const m = /^([\w-]+)((?:\[\d*\])*)$/.exec(part);
    if (!m) throw new Error(`reference cannot read key ${key}`);
    current = current.flatMap((v) => (isObj(v) && Object.hasOwn(v, m[1]) ? [v[m[1]]] : []));
    for (const bracket of m[2].match(/\[\d*\]/g) ?? []) {
      const index = bracket.slice(1, -1);
      current = current.flatMap((v) => {
        if (!Array.isArray(v)) return [];
        if (index === '') return v;
        return Number(index) < v.length ? [v[Number(index)]] : [];
      });
    }
  }
  return current;
}

function refField(c: Wire, ctx: Ctx): boolean {
  const values = valuesOf(c.key, ctx.payload);
  const has = (x: unknown): boolean => x !== null && x !== undefined;
  if (values.length === 0) {
    // A missing key holds no values: values_count sees a count of 0 (qdrant#9586).
    if (has(c.values_count)) return inBounds(c.values_count, 0);
    if (has(c.is_empty)) return c.is_empty;
    if (has(c.is_null)) return !c.is_null;
    return false;
  }
  if (has(c.values_count)) return values.some((v) => inBounds(c.values_count, v === null ? 0 : Array.isArray(v) ? v.length : 1));
  if (has(c.is_empty)) {
    return values.some((v) => (v === null ? c.is_empty : Array.isArray(v) ? (v.length === 0) === c.is_empty : !c.is_empty));
  }
  if (has(c.is_null)) {
    return values.some((v) => (v === null ? c.is_null : Array.isArray(v) ? v.includes(null) === c.is_null : !c.is_null));
  }
  const elements = values.flatMap((v) => (Array.isArray(v) ? v : [v]));
  const textIndexed = ctx.opts.textKeys?.has(ctx.prefix + c.key) ?? false;
  if (has(c.match) && textIndexed && ('text' in c.match || 'text_any' in c.match || 'phrase' in c.match)) {
    if (fullText(c.match, elements)) return true;
    return elements.some((e) => otherTests(c, e));
  }
  return elements.some((e) => (has(c.match) && refMatch(c.match, e)) || otherTests(c, e));
}

function otherTests(c: Wire, e: JsonValue): boolean {
  if (c.range && refRange(c.range, e)) return true;
  const p = isObj(e) && typeof e.lon === 'number' && typeof e.lat === 'number' ? { lon: e.lon, lat: e.lat } : null;
  if (!p) return false;
  if (c.geo_bounding_box && inBox(c.geo_bounding_box, p)) return true;
  if (c.geo_radius && distance(c.geo_radius.center, p) < c.geo_radius.radius) return true;
  if (c.geo_polygon && inPolygonRef(c.geo_polygon, p)) return true;
  return false;
}

function refMatch(m: Wire, e: JsonValue): boolean {
  if ('value' in m) return typeof e === typeof m.value && e === m.value;
  if ('text' in m) return typeof e === 'string' && e.includes(m.text);
  if ('phrase' in m) return typeof e === 'string' && e.includes(m.phrase);
  if ('text_any' in m) return typeof e === 'string' && (m.text_any as string).split(/\s+/).filter(Boolean).some((t) => e.includes(t));
  if ('prefix' in m) return typeof e === 'string' && e.startsWith(m.prefix);
  const list: JsonValue[] = m.any ?? m.except;
  const numeric = list.length > 0 && typeof list[0] === 'number';
  const listed = numeric ? typeof e === 'number' && Number.isInteger(e) && list.includes(e) : typeof e === 'string' && list.includes(e);
  if ('any' in m) return listed;
  return e !== null && !listed;
}

function inBounds(b: Wire, x: number): boolean {
  const ok = (bound: unknown, test: (y: number) => boolean): boolean => bound === null || bound === undefined || test(bound as number);
  return ok(b.lt, (y) => x < y) && ok(b.gt, (y) => x > y) && ok(b.lte, (y) => x <= y) && ok(b.gte, (y) => x >= y);
}

function refRange(r: Wire, e: JsonValue): boolean {
  const bounds = [r.lt, r.gt, r.lte, r.gte];
  if (bounds.some((b) => typeof b === 'string')) {
    const x = typeof e === 'string' ? refDatetime(e) : NaN;
    if (Number.isNaN(x)) return false;
    const conv = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? refDatetime(v) : v]));
    return inBounds(conv, x);
  }
  return typeof e === 'number' && inBounds(r, e);
}

/** Milliseconds since the epoch for the datetime forms the tests produce; NaN for anything else. */
export function refDatetime(s: string): number {
  if (/^\d{4}-\d\d-\d\d$/.test(s)) return Date.parse(`${s}T00:00:00Z`);
  if (/^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d{1,3})?$/.test(s)) return Date.parse(`${s.replace(' ', 'T')}Z`);
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)$/.test(s)) return Date.parse(s);
  return NaN;
}

function inBox(b: Wire, p: { lon: number; lat: number }): boolean {
  const { top_left: tl, bottom_right: br } = b;
  const lon = tl.lon > br.lon ? p.lon > tl.lon || p.lon < br.lon : p.lon > tl.lon && p.lon < br.lon;
  return lon && p.lat < tl.lat && p.lat > br.lat;
}

export function distance(a: { lon: number; lat: number }, b: { lon: number; lat: number }): number {
  const r = Math.PI / 180;
  const s = Math.sin(((b.lat - a.lat) * r) / 2) ** 2
    + Math.cos(a.lat * r) * Math.cos(b.lat * r) * Math.sin(((b.lon - a.lon) * r) / 2) ** 2;
  return 6371008.8 * 2 * Math.asin(Math.sqrt(s));
}

/** Even-odd ray casting: inside the exterior ring and outside every hole. */
function inPolygonRef(poly: Wire, p: { lon: number; lat: number }): boolean {
  const inside = (ring: { lon: number; lat: number }[]): boolean => {
    let odd = false;
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const a = ring[i];
      const b = ring[j];
      if ((a.lat > p.lat) !== (b.lat > p.lat) && p.lon < ((b.lon - a.lon) * (p.lat - a.lat)) / (b.lat - a.lat) + a.lon) odd = !odd;
    }
    return odd;
  };
  return inside(poly.exterior.points) && !(poly.interiors ?? []).some((h: Wire) => inside(h.points));
}

/** Default text index: lowercase runs of letters and digits. */
export function refTokens(s: string): string[] {
  return s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

function fullText(m: Wire, elements: JsonValue[]): boolean {
  const strings = elements.filter((e): e is string => typeof e === 'string');
  if ('phrase' in m) {
    const q = refTokens(m.phrase);
    const hasRun = (tokens: string[]): boolean => tokens.some((_, i) => q.every((t, j) => tokens[i + j] === t));
    return q.length > 0 && strings.some((s) => hasRun(refTokens(s)));
  }
  const all = new Set(strings.flatMap(refTokens));
  const q = refTokens(m.text ?? m.text_any);
  if (q.length === 0) return false;
  return 'text' in m ? q.every((t) => all.has(t)) : q.some((t) => all.has(t));
}

/** SipHash-2-4 (zero key) of the id bytes, modulo total, computed with BigInt. */
export function refSlice(id: PointId, total: number): number {
  const bytes = new Uint8Array(typeof id === 'string' ? 16 : 8);
  if (typeof id !== 'string') {
    for (let i = 0; i < 8; i++) bytes[i] = Number((BigInt(id) >> BigInt(8 * i)) & 0xffn);
  } else {
    const hex = id.replaceAll('-', '');
    for (let i = 0; i < 16; i++) bytes[i] = parseInt(hex.substr(2 * i, 2), 16);
  }
  const { h, l } = siphash.hash([0, 0, 0, 0], bytes);
  return Number(((BigInt(h >>> 0) << 32n) | BigInt(l >>> 0)) % BigInt(total));
}
