// Geo shapes as Qdrant tests points against them (lib/segment types.rs with the geo crate):
// - bounding box: strict inequalities; top_left.lon > bottom_right.lon means the box crosses the
//   antimeridian;
// - radius: haversine distance on a sphere of the geo crate's mean Earth radius, strictly less;
// - polygon: the point lies in the interior (not on an edge) of the exterior ring and in no hole
//   or on no hole's edge (geo's Contains), rings taken as planar lon/lat polygons.

import type { GeoBoundingBox, GeoPoint, GeoPolygon, GeoRadius } from './types.js';

/** geo::MEAN_EARTH_RADIUS, metres. */
export const EARTH_RADIUS = 6371008.8;

export function inBoundingBox(box: GeoBoundingBox, p: GeoPoint): boolean {
  const { topLeft, bottomRight } = box;
  const lonOk = topLeft.lon > bottomRight.lon
    ? p.lon > topLeft.lon || p.lon < bottomRight.lon
    : topLeft.lon < p.lon && p.lon < bottomRight.lon;
  return lonOk && bottomRight.lat < p.lat && p.lat < topLeft.lat;
}

export function haversine(a: GeoPoint, b: GeoPoint): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * Math.asin(Math.sqrt(h)) * EARTH_RADIUS;
}

export function inRadius(circle: GeoRadius, p: GeoPoint): boolean {
  return haversine(circle.center, p) < circle.radius;
}

export function inPolygon(polygon: GeoPolygon, p: GeoPoint): boolean {
  if (ringPosition(polygon.exterior, p) !== 'inside') return false;
  return polygon.interiors.every((hole) => ringPosition(hole, p) === 'outside');
}

type RingPosition = 'inside' | 'outside' | 'boundary';

/** Winding-number test with an explicit on-edge check (the ring is closed: first == last). */
function ringPosition(ring: GeoPoint[], p: GeoPoint): RingPosition {
  let winding = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const a = ring[i];
    const b = ring[i + 1];
    const cross = (b.lon - a.lon) * (p.lat - a.lat) - (p.lon - a.lon) * (b.lat - a.lat);
    if (cross === 0 && Math.min(a.lon, b.lon) <= p.lon && p.lon <= Math.max(a.lon, b.lon)
      && Math.min(a.lat, b.lat) <= p.lat && p.lat <= Math.max(a.lat, b.lat)) {
      return 'boundary';
    }
    if (a.lat <= p.lat) {
      if (b.lat > p.lat && cross > 0) winding++;
    } else if (b.lat <= p.lat && cross < 0) {
      winding--;
    }
  }
  return winding === 0 ? 'outside' : 'inside';
}

/** A lon/lat rectangle (inclusive) that contains every point a shape can match. */
export interface LonLatRect {
  minLon: number;
  maxLon: number;
  minLat: number;
  maxLat: number;
}

/**
 * Rectangles covering all in-range points (lon in [-180, 180], lat in [-90, 90]) a shape can
 * match; used by the geo index to pick candidates, which are then tested exactly.
 */
export function coveringRects(shape: { box: GeoBoundingBox } | { circle: GeoRadius } | { polygon: GeoPolygon }): LonLatRect[] {
  if ('box' in shape) {
    const { topLeft, bottomRight } = shape.box;
    const minLat = bottomRight.lat;
    const maxLat = topLeft.lat;
    if (topLeft.lon > bottomRight.lon) {
      return [{ minLon: topLeft.lon, maxLon: 180, minLat, maxLat }, { minLon: -180, maxLon: bottomRight.lon, minLat, maxLat }];
    }
    return [{ minLon: topLeft.lon, maxLon: bottomRight.lon, minLat, maxLat }];
  }
  if ('circle' in shape) return circleRects(shape.circle);
  const ring = shape.polygon.exterior;
  return [{
    minLon: Math.min(...ring.map((q) => q.lon)), maxLon: Math.max(...ring.map((q) => q.lon)),
    minLat: Math.min(...ring.map((q) => q.lat)), maxLat: Math.max(...ring.map((q) => q.lat)),
  }];
}

// Rounding slack for the spherical bounds below; candidates are re-tested exactly anyway.
const SLACK = 1e-6;

/** Latitude band of the circle, and its longitude extent unless it reaches a pole. */
function circleRects(circle: GeoRadius): LonLatRect[] {
  const angle = circle.radius / EARTH_RADIUS;
  const all: LonLatRect = { minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 };
  if (!(angle < Math.PI)) return [all];
  const deg = 180 / Math.PI;
  const { lon, lat } = circle.center;
  const minLat = lat - angle * deg - SLACK;
  const maxLat = lat + angle * deg + SLACK;
  if (minLat <= -90 || maxLat >= 90) return [{ ...all, minLat: Math.max(minLat, -90), maxLat: Math.min(maxLat, 90) }];
  const ratio = Math.sin(angle) / Math.cos(lat / deg);
  if (!(ratio < 1)) return [{ ...all, minLat, maxLat }];
  const dLon = Math.asin(ratio) * deg + SLACK;
  const minLon = lon - dLon;
  const maxLon = lon + dLon;
  if (minLon < -180) return [{ minLon: minLon + 360, maxLon: 180, minLat, maxLat }, { minLon: -180, maxLon, minLat, maxLat }];
  if (maxLon > 180) return [{ minLon, maxLon: 180, minLat, maxLat }, { minLon: -180, maxLon: maxLon - 360, minLat, maxLat }];
  return [{ minLon, maxLon, minLat, maxLat }];
}
