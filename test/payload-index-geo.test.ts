// Geo index: candidates from the grid, then exact tests, must equal testing every point, for
// shapes of every size: tiny, continental, crossing the antimeridian, around a pole, global.

import t from 'tap';
import type { JsonValue, Payload } from '../src/model.js';
import { rng } from './helpers/data.js';
import { answer, indexOf } from './helpers/filter-index.js';
import { distance } from './helpers/filter-reference.js';

const next = rng(11);
const N = 3000;
const randomPoint = (): JsonValue => ({ lon: next() * 360 - 180, lat: next() * 180 - 90 });
const payloads: Payload[] = Array.from({ length: N }, (_, i): Payload => {
  if (i % 50 === 0) return { g: { lon: 190 + next(), lat: 0 } }; // outside the valid ranges
  if (i % 10 === 0) return { g: [randomPoint(), randomPoint()] };
  if (i % 17 === 0) return { g: { lat: 1 } };
  if (i % 3 === 0) return { g: { lon: 10 + next(), lat: 50 + next() } }; // a dense cluster
  return { g: randomPoint() };
});
const index = indexOf('g', 'geo', payloads);
const pointsOf = (p: Payload): { lon: number; lat: number }[] => [p.g].flat().filter((g): g is { lon: number; lat: number } =>
  typeof g === 'object' && g !== null && typeof (g as { lon?: unknown }).lon === 'number' && typeof (g as { lat?: unknown }).lat === 'number');

function brute(test: (p: { lon: number; lat: number }) => boolean): number[] {
  return payloads.flatMap((p, o) => (pointsOf(p).some(test) ? [o] : []));
}

t.test('indexed points', async (t) => {
  t.equal(index.indexedPoints(), payloads.filter((p) => pointsOf(p).length > 0).length);
});

t.test('radius', async (t) => {
  const circles = [
    { center: { lon: 10.5, lat: 50.5 }, radius: 20_000 },
    { center: { lon: 179.9, lat: 0 }, radius: 500_000 },
    { center: { lon: -179.9, lat: 10 }, radius: 2_000_000 },
    { center: { lon: 0, lat: 89 }, radius: 300_000 },
    { center: { lon: 0, lat: -88 }, radius: 1_000_000 },
    { center: { lon: 40, lat: 70 }, radius: 3_000_000 },
    { center: { lon: 0, lat: 0 }, radius: 30_000_000 },
    { center: { lon: 5, lat: 5 }, radius: 0 },
  ];
  for (let i = 0; i < 40; i++) circles.push({ center: { lon: next() * 360 - 180, lat: next() * 180 - 90 }, radius: next() * 5_000_000 });
  for (const c of circles) {
    t.same(answer(index, { key: 'g', geo_radius: c }, N), brute((p) => distance(c.center, p) < c.radius), JSON.stringify(c));
  }
});

t.test('bounding boxes', async (t) => {
  const boxes = [
    { top_left: { lon: 10, lat: 51 }, bottom_right: { lon: 11, lat: 50 } },
    { top_left: { lon: 170, lat: 30 }, bottom_right: { lon: -170, lat: -30 } },
    { top_left: { lon: -180, lat: 90 }, bottom_right: { lon: 180, lat: -90 } },
    { top_left: { lon: 0, lat: 0 }, bottom_right: { lon: 1, lat: 1 } },
  ];
  for (let i = 0; i < 40; i++) {
    const [a, b] = [next() * 360 - 180, next() * 360 - 180];
    const [c, d] = [next() * 180 - 90, next() * 180 - 90].sort((x, y) => y - x);
    boxes.push({ top_left: { lon: a, lat: c }, bottom_right: { lon: b, lat: d } });
  }
  for (const box of boxes) {
    const tl = box.top_left;
    const br = box.bottom_right;
    const inside = (p: { lon: number; lat: number }) => (tl.lon > br.lon ? p.lon > tl.lon || p.lon < br.lon : p.lon > tl.lon && p.lon < br.lon)
      && p.lat < tl.lat && p.lat > br.lat;
    t.same(answer(index, { key: 'g', geo_bounding_box: box }, N), brute(inside), JSON.stringify(box));
  }
});

t.test('polygons', async (t) => {
  for (let i = 0; i < 30; i++) {
    const cx = next() * 300 - 150;
    const cy = next() * 140 - 70;
    const r = next() * 30;
    const ring = Array.from({ length: 7 }, (_, k) => ({ lon: cx + r * Math.cos(k) * (0.5 + next()), lat: cy + r * Math.sin(k) * (0.5 + next()) }));
    ring.push(ring[0]);
    const inside = (p: { lon: number; lat: number }) => {
      let odd = false;
      for (let a = 0, b = ring.length - 1; a < ring.length; b = a++) {
        if ((ring[a].lat > p.lat) !== (ring[b].lat > p.lat) && p.lon < ((ring[b].lon - ring[a].lon) * (p.lat - ring[a].lat)) / (ring[b].lat - ring[a].lat) + ring[a].lon) odd = !odd;
      }
      return odd;
    };
    t.same(answer(index, { key: 'g', geo_polygon: { exterior: { points: ring } } }, N), brute(inside), `polygon ${i}`);
  }
});

t.test('updates', async (t) => {
  const small = indexOf('g', 'geo', [{ g: { lon: 1, lat: 1 } }, { g: { lon: 2, lat: 2 } }]);
  const box = { top_left: { lon: 0, lat: 3 }, bottom_right: { lon: 3, lat: 0 } };
  small.add(0, { g: { lon: 50, lat: 50 } });
  small.remove(1);
  small.add(2, { g: [{ lon: 1.5, lat: 1.5 }, { lon: 200, lat: 0 }] });
  t.same(answer(small, { key: 'g', geo_bounding_box: box }, 3), [2]);
  t.same(answer(small, { key: 'g', match: { value: 1 } }, 3), undefined);
  t.equal(small.indexedPoints(), 2);
});
