// A shard recovery swaps directories in two renames; a crash can fall between them or leave the
// directories it worked with behind. Opening the shard afterwards must find exactly one store:
// the old one when the swap never completed (the recovery was not acknowledged), the new one
// once it is in place, and no leftover directory.

import t from 'tap';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settleShardDirectory } from '../src/shard/snapshot-part.js';
import { Shard } from '../src/shard/shard.js';
import { DEFAULT_OPTIMIZER_SPEC } from '../src/shard/optimizer/plan.js';
import type { PointRecord } from '../src/shard/write-ops.js';

const spec = (path: string) => ({
  path,
  vectors: [{ name: '', size: 2, distance: 'Dot' as const, m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }],
  sparseVectors: [],
  indexes: [],
  optimizer: DEFAULT_OPTIMIZER_SPEC,
});

async function* records(ids: number[]): AsyncGenerator<PointRecord> {
  for (const id of ids) yield { id, vectors: { '': new Float32Array([id, 1]) }, payload: { id }, version: 1 };
}

async function idsIn(path: string): Promise<unknown[]> {
  const shard = await Shard.open(spec(path));
  const ids = shard.orderedIds();
  await shard.close();
  return ids;
}

t.test('settling a shard directory after an interrupted swap', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-settle-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, '3');

  // Crash between the two renames: the old store was moved away, the new one not yet moved in.
  await Shard.createStore(`${path}.replaced-a`, records([1, 2]), 5);
  await Shard.createStore(`${path}.recovering-b`, records([7]), 9);
  await settleShardDirectory(path);
  t.same(await idsIn(path), [1, 2], 'the old store is back');
  t.same((await readdir(dir)).sort(), ['3'], 'nothing else is left');

  // Crash after the new store moved in, before the old one was removed.
  await Shard.createStore(`${path}.replaced-c`, records([4]), 3);
  await settleShardDirectory(path);
  t.same(await idsIn(path), [1, 2], 'the store in place stays');
  t.same((await readdir(dir)).sort(), ['3'], 'the replaced store is removed');

  // A shard of the same folder with a longer name is not this shard's leftover.
  await Shard.createStore(join(dir, '30'), records([30]), 1);
  await settleShardDirectory(path);
  t.same((await readdir(dir)).sort(), ['3', '30']);
  t.same(await idsIn(join(dir, '30')), [30]);

  await settleShardDirectory(join(dir, 'never-created'));
  t.same((await readdir(dir)).sort(), ['3', '30'], 'a shard with no directory yet is left to open empty');
});
