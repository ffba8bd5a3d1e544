// Tasks queued for a shard worker in one turn of the event loop go to it as one message
// (src/worker/supervisor.ts): the answers are the same as one task at a time, each task gets its
// own, and reads and writes queued together keep their order (a read sees the writes queued
// before it and none queued after it; a write still waits for the reads before it to be answered,
// and the tasks after it for its answer).

import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessagePort } from 'node:worker_threads';
import { ShardWorkers } from '../src/worker/pool.js';
import type { ShardSpec } from '../src/shard/shard.js';
import type { SearchSpec } from '../src/shard/search.js';
import type { WriteOp } from '../src/shard/write-ops.js';

const DIM = 8;
let seed = 11;
const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
const vector = (): number[] => Array.from({ length: DIM }, random);

/** How many times the main thread posts on a MessagePort while `work` runs (the supervisor's port included). */
async function countPosts<T>(work: () => Promise<T>): Promise<[T, number]> {
  const post = MessagePort.prototype.postMessage;
  let posts = 0;
  MessagePort.prototype.postMessage = function (this: MessagePort, ...args: Parameters<MessagePort['postMessage']>) {
    posts++;
    return post.apply(this, args);
  };
  try {
    return [await work(), posts];
  } finally {
    MessagePort.prototype.postMessage = post;
  }
}

t.test('tasks queued together: one post, the answers of one task at a time, writes and reads in order', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-coalescing-'));
  const workers = new ShardWorkers(1);
  t.teardown(async () => {
    await workers.close();
    await rm(dir, { recursive: true, force: true });
  });
  const shard = 'c/0';
  const spec: ShardSpec = { path: join(dir, '0'), vectors: [{ name: '', size: DIM, distance: 'Cosine', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null }], sparseVectors: [], indexes: [], wal: { capacityBytes: 32 << 20, retainClosed: 1 } };
  await workers.run(0, { type: 'open', shard, spec });
  const upsert = (from: number, n: number): WriteOp[] => [{ kind: 'upsert', points: Array.from({ length: n }, (_, i) => ({ id: from + i, vectors: { '': Float32Array.from(vector()) }, payload: { n: from + i } })), mode: 'upsert', updateFilter: null }];
  let op = 0;
  const apply = (ops: WriteOp[]) => { op++; return workers.run(0, { type: 'apply', shard, ops, opId: op, clock: { peer: 0, clockId: 0, tick: op }, wait: true, dryRun: false }); };
  await apply(upsert(1, 300));

  // MAX_READS_SENT (16) reads may be in the worker at once: 16 queued together go in one post.
  const queries = Array.from({ length: 16 }, vector);
  const search = (q: number[], withPayload: boolean): SearchSpec => ({
    using: '', query: { kind: 'nearest', vector: q }, filter: null, top: 5,
    params: { hnswEf: 32, exact: false, quantization: null, indexedOnly: false, idfCorpus: null },
    scoreThreshold: null, withPayload: withPayload ? { all: true } : { all: false }, withVector: false,
  });
  // Half with payloads: those hits cross as objects, the others as one block (task-wire.ts).
  const task = (i: number) => workers.run(0, { type: 'search', shard, searches: [search(queries[i], i % 2 === 0)] }, null, 'coalescing');

  const oneByOne = [];
  for (let i = 0; i < queries.length; i++) oneByOne.push(await task(i));
  const [together, posts] = await countPosts(() => Promise.all(queries.map((_, i) => task(i))));
  t.same(together, oneByOne, 'the same hits for every task, each answered with its own');
  t.equal(posts, 1, '16 reads queued in one turn went in one post');

  // One turn: a count, a write of 50 new points, a count, a delete of 10, a count.
  const counts = await Promise.all([
    workers.run(0, { type: 'count', shard, filter: null }),
    apply(upsert(1000, 50)),
    workers.run(0, { type: 'count', shard, filter: null }),
    apply([{ kind: 'delete', target: { ids: Array.from({ length: 10 }, (_, i) => i + 1) } }]),
    workers.run(0, { type: 'count', shard, filter: null }),
  ]);
  t.same(counts, [300, null, 350, null, 340], 'each read sees the writes queued before it and none after it');
  await workers.run(0, { type: 'close', shard });
});
