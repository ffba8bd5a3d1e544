// This node's replicas over real shard workers (no server): a replica places the tasks it is
// given (the folder and the worker are its own), pins a deadline budget to its clock, and its
// drop removes the shard's folder, also one its worker never opened. The placement's start-up
// sweep removes the folders no collection keeps.

import t from 'tap';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalPlacement } from '../src/replica/local-placement.js';
import { DEFAULT_OPTIMIZER_SPEC } from '../src/shard/optimizer/plan.js';
import type { ShardContent } from '../src/replica/replica.js';
import { ShardWorkers } from '../src/worker/pool.js';

const CONTENT: ShardContent = {
  vectors: [{ name: '', size: 2, distance: 'Dot', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }],
  sparseVectors: [],
  indexes: [],
  optimizer: DEFAULT_OPTIMIZER_SPEC,
};

const workers = new ShardWorkers(1);
t.teardown(() => workers.close());

t.test('a local replica over its worker', async (t) => {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-replica-'));
  t.teardown(() => rm(storage, { recursive: true, force: true }));
  const placement = new LocalPlacement(storage, workers);
  const folder = join(storage, 'collections', 'sid', '3');

  // A folder left by a shard dropped just before a crash, never opened since.
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'stale'), 'old');
  const replica = placement.replica({ collection: 'c', shard: 3 }, 'sid');
  t.equal(replica.peer, 0, 'a single node\'s replica is of peer 0');
  await replica.run({ type: 'drop' }, null);
  t.notOk(existsSync(folder), 'drop removes a folder its worker never opened');

  t.same(await replica.run({ type: 'open', spec: CONTENT }, null), { lastOp: 0 });
  t.ok(existsSync(folder), 'the shard is opened in the replica\'s own folder');
  await replica.run({ type: 'apply', ops: [{ kind: 'upsert', points: [{ id: 1, vectors: { '': new Float32Array([1, 2]) }, payload: { a: 1 } }], mode: 'upsert', updateFilter: null }], opId: 7, clock: { peer: 0, clockId: 0, tick: 7 }, wait: true, dryRun: false }, null);
  t.equal(await replica.run({ type: 'count', filter: null }, { remainingMs: 60_000, seconds: 60, operation: 'Count' }), 1, 'a read with time left runs');
  await t.rejects(replica.run({ type: 'count', filter: null }, { remainingMs: 0, seconds: 1, operation: 'Count' }), { message: "Timeout: Timeout error: Operation 'Count' timed out after 1s", statusCode: 408 }, 'one with none left is refused');
  t.same((await replica.run({ type: 'stats' }, null)).lastOp, 7, 'the shard recorded the operation id');

  await replica.run({ type: 'drop' }, null);
  t.notOk(existsSync(folder), 'drop removes the folder of an open shard');
  await t.rejects(replica.run({ type: 'count', filter: null }, null), { message: 'Not found: shard sid/3 is not open' });
});

t.test('the start-up sweep removes the folders no collection keeps', async (t) => {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-replica-'));
  t.teardown(() => rm(storage, { recursive: true, force: true }));
  const collections = join(storage, 'collections');
  for (const dir of ['kept/0', 'kept/1', 'kept/5', 'gone/0']) await mkdir(join(collections, dir), { recursive: true });
  const removed = await new LocalPlacement(storage, workers).removeOrphans(new Map([['kept', [0, 1]]]));
  t.same(removed.sort(), [join(collections, 'gone'), join(collections, 'kept', '5')], 'a collection no record names, a shard no key names');
  t.same(await readdir(collections), ['kept']);
  t.same((await readdir(join(collections, 'kept'))).sort(), ['0', '1']);
});
