// What all payload indexes share: reading a point's values at the key, and answering the
// conditions that only look at the shape of those values (values_count, is_empty, is_null) from
// a per-point record of shapes. Each kind of index adds its own structure for its value type.

import { Bitset } from '../../engine/bitset.js';
import { BadInput } from '../../errors.js';
import type { JsonValue, Payload } from '../../model.js';
import { checkMissing, isEmptyShape, isNullShape, judgeShape, judgedByShape, shapeOf, type ValueShape } from '../filter/field-check.js';
import { flatten, formatJsonPath, parseJsonPath, valuesAt, type JsonPath } from '../filter/json-path.js';
import type { FieldCondition, GeoBoundingBox, GeoPolygon, GeoRadius, Match, Range } from '../filter/types.js';
import type { IndexParams } from './schema.js';
import type { IndexableCondition, PayloadIndex } from './types.js';

/** The one test of a field condition that tests values by match, range or geo shape alone. */
export type SoleTest =
  | { match: Match }
  | { range: Range }
  | { box: GeoBoundingBox }
  | { circle: GeoRadius }
  | { polygon: GeoPolygon };

export abstract class BaseIndex implements PayloadIndex {
  readonly key: string;
  private readonly path: JsonPath;
  private readonly shapes = new Map<number, ValueShape[]>();

  constructor(key: string, readonly params: IndexParams) {
    const path = parseJsonPath(key);
    if (!path) throw new BadInput(`Invalid json path: '${key}'`);
    this.path = path;
    this.key = formatJsonPath(path);
  }

  add(offset: number, payload: Payload): void {
    this.remove(offset);
    const values = valuesAt(this.path, payload);
    if (values.length === 0) return;
    this.shapes.set(offset, values.map(shapeOf));
    this.insert(offset, flatten(values));
  }

  remove(offset: number): void {
    if (this.shapes.delete(offset)) this.erase(offset);
  }

  select(cond: IndexableCondition, size: number): Bitset | undefined {
    switch (cond.kind) {
      case 'isEmpty':
        return this.selectByShapes(size, true, (shapes) => shapes.every(isEmptyShape));
      case 'isNull':
        return this.selectByShapes(size, false, (shapes) => shapes.some(isNullShape));
      case 'field': {
        if (judgedByShape(cond)) return this.selectByShapes(size, checkMissing(cond), (shapes) => shapes.some((s) => judgeShape(cond, s)));
        const test = soleTest(cond);
        return test && this.selectValues(test, size);
      }
    }
  }

  abstract indexedPoints(): number;

  /** Records the values (arrays opened one level) of a point that has some. */
  protected abstract insert(offset: number, elements: JsonValue[]): void;

  /** Forgets everything `insert` recorded for the offset. */
  protected abstract erase(offset: number): void;

  /** The offsets whose values pass `test`, or undefined when this index cannot tell. */
  protected abstract selectValues(test: SoleTest, size: number): Bitset | undefined;

  /** Points with values, judged by their shapes; points without values get `missing`. */
  private selectByShapes(size: number, missing: boolean, holds: (shapes: ValueShape[]) => boolean): Bitset {
    const out = new Bitset(size);
    if (missing) {
      for (const offset of this.shapes.keys()) if (offset < size) out.add(offset);
      out.invert();
    }
    for (const [offset, shapes] of this.shapes) {
      if (offset < size && holds(shapes)) out.add(offset);
    }
    return out;
  }
}

function soleTest(cond: FieldCondition): SoleTest | undefined {
  const tests: SoleTest[] = [];
  if (cond.match) tests.push({ match: cond.match });
  if (cond.range) tests.push({ range: cond.range });
  if (cond.geoBoundingBox) tests.push({ box: cond.geoBoundingBox });
  if (cond.geoRadius) tests.push({ circle: cond.geoRadius });
  if (cond.geoPolygon) tests.push({ polygon: cond.geoPolygon });
  return tests.length === 1 ? tests[0] : undefined;
}

/** Adds `offsets` that fit in `size` to a new bitset. */
export function bitsetOf(size: number, offsets: Iterable<number>): Bitset {
  const out = new Bitset(size);
  for (const offset of offsets) if (offset < size) out.add(offset);
  return out;
}
