// Geo index: a grid of half-degree lon/lat cells -> points with a geo value in the cell. A geo
// condition takes the points in the cells its shape can reach, then tests their points exactly.
// Payload points outside lon [-180, 180] / lat [-90, 90] (which payload checks still test)
// are kept aside and always tested.

import type { Bitset } from '../../engine/bitset.js';
import type { JsonValue } from '../../model.js';
import { geoPointOf } from '../filter/field-check.js';
import { coveringRects, inBoundingBox, inPolygon, inRadius, type LonLatRect } from '../filter/geo.js';
import type { GeoPoint } from '../filter/types.js';
import { BaseIndex, bitsetOf, type SoleTest } from './base.js';
import type { GeoIndexParams } from './schema.js';

const CELL = 0.5;
const LAT_CELLS = 180 / CELL;
const LON_CELLS = 360 / CELL;

export class GeoIndex extends BaseIndex {
  private readonly points = new Map<number, GeoPoint[]>();
  private readonly cells = new Map<number, Set<number>>();
  private readonly outliers = new Set<number>();

  constructor(key: string, params: GeoIndexParams) {
    super(key, params);
  }

  indexedPoints(): number {
    return this.points.size;
  }

  protected insert(offset: number, elements: JsonValue[]): void {
    const points: GeoPoint[] = [];
    for (const e of elements) {
      const p = geoPointOf(e);
      if (p) points.push(p);
    }
    if (points.length === 0) return;
    this.points.set(offset, points);
    for (const p of points) {
      const cell = cellOf(p);
      if (cell === undefined) {
        this.outliers.add(offset);
        continue;
      }
      let set = this.cells.get(cell);
      if (!set) this.cells.set(cell, (set = new Set()));
      set.add(offset);
    }
  }

  protected erase(offset: number): void {
    const points = this.points.get(offset);
    if (!points) return;
    this.points.delete(offset);
    this.outliers.delete(offset);
    for (const p of points) {
      const cell = cellOf(p);
      const set = cell === undefined ? undefined : this.cells.get(cell);
      if (!set) continue;
      set.delete(offset);
      if (set.size === 0) this.cells.delete(cell!);
    }
  }

  protected selectValues(test: SoleTest, size: number): Bitset | undefined {
    if ('match' in test || 'range' in test) return undefined;
    const holds = (p: GeoPoint): boolean => ('box' in test ? inBoundingBox(test.box, p)
      : 'circle' in test ? inRadius(test.circle, p) : inPolygon(test.polygon, p));
    const candidates = new Set(this.outliers);
    for (const cell of this.cellsWithin(coveringRects(test))) {
      for (const offset of this.cells.get(cell)!) candidates.add(offset);
    }
    const matching = [...candidates].filter((offset) => this.points.get(offset)!.some(holds));
    return bitsetOf(size, matching);
  }

  /** Non-empty cells overlapping any of `rects`. */
  private *cellsWithin(rects: LonLatRect[]): Iterable<number> {
    const ranges = rects.map((r) => ({
      lat0: latCell(r.minLat), lat1: latCell(r.maxLat), lon0: lonCell(r.minLon), lon1: lonCell(r.maxLon),
    }));
    const area = ranges.reduce((sum, r) => sum + (r.lat1 - r.lat0 + 1) * (r.lon1 - r.lon0 + 1), 0);
    if (area > this.cells.size) {
      // Fewer occupied cells than cells in range: walk the occupied ones.
      for (const cell of this.cells.keys()) {
        const lat = Math.floor(cell / LON_CELLS);
        const lon = cell % LON_CELLS;
        if (ranges.some((r) => r.lat0 <= lat && lat <= r.lat1 && r.lon0 <= lon && lon <= r.lon1)) yield cell;
      }
      return;
    }
    const seen = new Set<number>();
    for (const r of ranges) {
      for (let lat = r.lat0; lat <= r.lat1; lat++) {
        for (let lon = r.lon0; lon <= r.lon1; lon++) {
          const cell = lat * LON_CELLS + lon;
          if (this.cells.has(cell) && !seen.has(cell)) {
            seen.add(cell);
            yield cell;
          }
        }
      }
    }
  }
}

function latCell(lat: number): number {
  return Math.min(LAT_CELLS - 1, Math.max(0, Math.floor((lat + 90) / CELL)));
}

function lonCell(lon: number): number {
  return Math.min(LON_CELLS - 1, Math.max(0, Math.floor((lon + 180) / CELL)));
}

/** The grid cell of an in-range point; undefined outside the lon/lat ranges. */
function cellOf(p: GeoPoint): number | undefined {
  if (!(p.lat >= -90 && p.lat <= 90 && p.lon >= -180 && p.lon <= 180)) return undefined;
  return latCell(p.lat) * LON_CELLS + lonCell(p.lon);
}
