// The operation log through a real shard worker thread: `apply` tasks with wait=false answer
// before the apply and every later task sees it; `recovery_point` and `log_after` answer what the
// shard holds; the refusal of truncated entries crosses the thread as a typed error; a snapshot
// taken right after a wait=false write holds it.

import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ShardWorkers } from '../src/worker/pool.js';
import type { ShardSpec } from '../src/shard/shard.js';
import type { WriteOp } from '../src/shard/write-ops.js';

t.test('apply, recovery_point and log_after tasks', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-worker-log-'));
  const workers = new ShardWorkers(1);
  t.teardown(async () => {
    await workers.close();
    await rm(dir, { recursive: true, force: true });
  });
  const shard = 'c/0';
  // 1-byte segments: every entry fills one, so with one closed segment kept the log holds two entries.
  const spec: ShardSpec = { path: join(dir, '0'), vectors: [{ name: '', size: 2, distance: 'Dot', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }], sparseVectors: [], indexes: [], wal: { capacityBytes: 1, retainClosed: 1 } };
  t.same(await workers.run(0, { type: 'open', shard, spec }), { lastOp: 0 });

  const upsert = (id: number): WriteOp[] => [{ kind: 'upsert', points: [{ id, vectors: { '': new Float32Array([id, 1]) }, payload: { id } }], mode: 'upsert', updateFilter: null }];
  for (let op = 1; op <= 4; op++) {
    t.equal(await workers.run(0, { type: 'apply', shard, ops: upsert(op), opId: op, clock: { peer: 0, clockId: 0, tick: op }, wait: op % 2 === 0, dryRun: false }), null);
  }
  t.same(await workers.run(0, { type: 'count', shard, filter: null }), 4, 'every acknowledged write is seen by the next task');
  t.same(await workers.run(0, { type: 'recovery_point', shard }), { clocks: [{ peer: 0, clockId: 0, tick: 4 }], cutoff: [{ peer: 0, clockId: 0, tick: 2 }], firstSeq: 3, lastSeq: 4, appliedSeq: 4 }, 'the entries truncated: their ticks are the cutoff');

  const entries = await workers.run(0, { type: 'log_after', shard, after: 2, limit: 10 });
  t.same(entries, [
    { seq: 3, opId: 3, clock: { peer: 0, clockId: 0, tick: 3 }, ops: upsert(3) },
    { seq: 4, opId: 4, clock: { peer: 0, clockId: 0, tick: 4 }, ops: upsert(4) },
  ], 'entries after 2, whole');
  await t.rejects(workers.run(0, { type: 'log_after', shard, after: 1, limit: 10 }), {
    kind: 'LogTruncated', statusCode: 400, message: 'Bad request: operations after 1 are no longer in the operation log (it holds 3 to 4)',
  }, 'truncated entries: a typed error across the thread');
  t.equal(await workers.run(0, { type: 'apply', shard, ops: upsert(5), opId: 5, clock: { peer: 0, clockId: 0, tick: 5 }, wait: false, dryRun: false }), null);
  t.same(await workers.run(0, { type: 'snapshot', shard, path: join(dir, 'part') }), { points: 5, lastOp: 5 }, 'a snapshot right after a wait=false write holds it');

  // Sent without waiting, so they queue together and go as one batch: each has its own answer.
  const apply = (ops: WriteOp[], op: number, wait: boolean) => workers.run(0, { type: 'apply', shard, ops, opId: op, clock: { peer: 0, clockId: 0, tick: op }, wait, dryRun: false });
  const queued = await Promise.allSettled([
    apply(upsert(6), 6, false),
    apply([{ kind: 'clear_payload', target: { ids: [99] } }], 7, true),
    apply(upsert(8), 8, true),
    workers.run(0, { type: 'count', shard, filter: null }),
  ]);
  t.match(queued, [
    { status: 'fulfilled', value: null },
    { status: 'rejected', reason: { statusCode: 404, message: 'Not found: No point with id 99 found' } },
    { status: 'fulfilled', value: null },
    { status: 'fulfilled', value: 7 },
  ], 'queued updates: each answered on its own, the refused one alone fails, the read after them sees the others');
  t.same((await workers.run(0, { type: 'log_after', shard, after: 5, limit: 10 })).map((e) => [e.seq, e.opId]), [[6, 6], [7, 8]], 'the two taken are logged one after the other');
  await workers.run(0, { type: 'close', shard });
});
