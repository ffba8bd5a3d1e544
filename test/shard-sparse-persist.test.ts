// Sparse index images persisted with the shard: past the indexing threshold a shard writes its
// sparse indexes' images with the offset -> id map and the last operation they include; opening
// loads them and lays the records written after them over them. The kill -9 state is taken by
// copying the store's files while the shard is idle (what a SIGKILL leaves: everything the
// process wrote, synced or not); searches on the copy must equal an exact reference over every
// write, those after the last image included.

import t from 'tap';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { Shard, type ShardSpec } from '../src/shard/shard.js';
import type { SortedSparse } from '../src/engine/index.js';
import type { GraphMeta } from '../src/shard/optimizer/graph-store.js';
import { SparseGenerator } from '../src/bench/sparse-data.js';

const N = 3000;
const K = 10;
const gen = new SparseGenerator({ vocabulary: 2000, nonZeros: 30, seed: 11 });
const queries = Array.from({ length: 40 }, () => gen.vector(8));

function spec(path: string): ShardSpec {
  return {
    path,
    vectors: [],
    sparseVectors: [{ name: 's', fullScanThreshold: 0, datatype: 'float32', idf: false }],
    indexes: [],
    // 100 KiB: about 430 documents of 30 postings of 8 bytes.
    optimizer: { indexingThresholdKb: 100, deletedThreshold: 0.2, vacuumMinVectorNumber: 1000, maxOptimizationThreads: null },
  };
}

let opId = 0;
const clock = () => ({ peer: 0, clockId: 0, tick: opId });

async function upsert(shard: Shard, model: Map<number, SortedSparse>, ids: number[]): Promise<void> {
  const points = ids.map((id) => ({ id, vectors: { s: gen.vector() }, payload: {} }));
  ++opId;
  await shard.apply([{ kind: 'upsert', points, mode: 'upsert', updateFilter: null }], opId, clock(), true);
  for (const p of points) model.set(p.id, p.vectors.s);
}

async function remove(shard: Shard, model: Map<number, SortedSparse>, ids: number[]): Promise<void> {
  ++opId;
  await shard.apply([{ kind: 'delete', target: { ids } }], opId, clock(), true);
  for (const id of ids) model.delete(id);
}

/** Top k by dot product over shared indices (f64 in index order, rounded to f32), as "id:score". */
function reference(model: Map<number, SortedSparse>, q: SortedSparse): string[] {
  const weights = new Map<number, number>();
  q.indices.forEach((x, i) => weights.set(x, q.values[i]));
  const hits: { id: number; s: number }[] = [];
  for (const [id, d] of model) {
    let s = 0;
    let shared = false;
    d.indices.forEach((x, i) => {
      const w = weights.get(x);
      if (w === undefined) return;
      shared = true;
      s += w * d.values[i];
    });
    if (shared) hits.push({ id, s: Math.fround(s) });
  }
  hits.sort((a, b) => b.s - a.s || a.id - b.id);
  return hits.slice(0, K).map((h) => `${h.id}:${h.s}`);
}

function found(shard: Shard, q: SortedSparse, exact: boolean): string[] {
  const r = shard.sparseIndex('s')!.search(q, { limit: K, exact });
  const hits = Array.from(r.offsets, (o, i) => ({ id: shard.pointId(o) as number, s: r.scores[i] }));
  hits.sort((a, b) => b.s - a.s || a.id - b.id);
  return hits.map((h) => `${h.id}:${h.s}`);
}

function mismatches(shard: Shard, model: Map<number, SortedSparse>): number {
  let bad = 0;
  for (const q of queries) {
    const want = reference(model, q).join();
    for (const exact of [false, true]) if (found(shard, q, exact).join() !== want) bad++;
  }
  return bad;
}

/** The store's image metadata, read from a copy (the shard holds the original's lock). */
async function metaOf(dir: string): Promise<GraphMeta | null> {
  const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  await db.open();
  try {
    const raw = await db.get('g:meta');
    return raw ? (JSON.parse(new TextDecoder().decode(raw)) as GraphMeta) : null;
  } finally {
    await db.close();
  }
}

/**
 * Copies the store's files as a kill -9 would leave them. The store's own background compaction
 * may remove a file between the listing and its copy: then the copy is taken again (bounded).
 */
async function crashCopy(from: string, root: string, name: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const to = join(root, `${name}-${attempt}`);
    try {
      await cp(from, to, { recursive: true });
      return to;
    } catch (err) {
      if (attempt >= 20 || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

t.test('kill -9 after the sparse images: the reopened shard loads them, lays later writes over them, equals the reference', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'quiver-sparse-persist-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const path = join(root, 'live');
  const model = new Map<number, SortedSparse>();
  const shard = await Shard.open(spec(path));
  t.teardown(() => shard.close());

  for (let from = 0; from < N; from += 500) await upsert(shard, model, Array.from({ length: 500 }, (_, i) => from + i));
  await remove(shard, model, Array.from({ length: 200 }, (_, i) => i * 7));
  // The images are written in the background once the changes pass the threshold: wait for one
  // (bounded), polling crash copies.
  let meta: GraphMeta | null = null;
  for (let probe = 0, deadline = Date.now() + 60_000; Date.now() < deadline; probe++) {
    meta = await metaOf(await crashCopy(path, root, `probe-${probe}`)).catch(() => null /* a copy taken mid-write: probe again */);
    if (meta?.sparse?.some((s) => s.name === 's')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(meta?.sparse?.some((s) => s.name === 's'), `a sparse image was persisted (including operations up to ${meta?.lastOp})`);
  const imageOp = meta!.lastOp;

  // Writes after the image, below the threshold (no new image): replacements, deletions, new points.
  await upsert(shard, model, [1, 2, 3, 14, 5000, 5001]);
  await remove(shard, model, [21, 5001, 100]);
  await upsert(shard, model, [21]);
  await shard.flush();
  t.equal(mismatches(shard, model), 0, 'the running shard equals the reference');

  const crashed = await crashCopy(path, root, 'crashed');
  // An image the background writer had queued during the first writes may land after the probe
  // saw an earlier one: the copy holds that image or a later one, never one of the last writes.
  const crashedOp = (await metaOf(await crashCopy(crashed, root, 'crashed-meta')))?.lastOp ?? 0;
  t.ok(crashedOp >= imageOp && crashedOp < opId, `the copy holds an image older than the last writes (operation ${crashedOp} of ${opId})`);
  const reopened = await Shard.open(spec(crashed));
  t.teardown(() => reopened.close());
  t.equal(reopened.pointCount, model.size, 'every point is there');
  t.equal(reopened.sparseIndex('s')!.size, model.size, 'and every sparse vector');
  t.equal(mismatches(reopened, model), 0, 'pruned and exact searches equal the reference after the restart (80 searches)');
  for (const id of [1, 21, 5000]) t.same(reopened.record(id)?.vectors.s, model.get(id), `point ${id} has its latest vector`);
  t.equal(reopened.record(100), undefined, 'a point deleted after the image stays deleted');

  // The restarted shard goes on: more writes, and another crash copy, still equal.
  await upsert(reopened, model, [100, 7, 6000]);
  await reopened.flush();
  const again = await Shard.open(spec(await crashCopy(crashed, root, 'again')));
  t.teardown(() => again.close());
  t.equal(mismatches(again, model), 0, 'a second kill -9 and restart equals the reference too');
});
