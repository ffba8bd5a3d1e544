// The wire form of search tasks and their hits (src/worker/task-wire.ts), through a real
// MessagePort with the buffers transferred: what the worker runs is the task sent (dense query
// vectors as the f32 values the engine would store), and what the supervisor hands on is the
// hits sent, whatever their ids and parts.

import t from 'tap';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { packReply, packTask, unpackReply, unpackTask } from '../src/worker/task-wire.js';
import type { TaskMessage, TaskReply } from '../src/worker/tasks.js';
import type { ScoredView, SearchSpec } from '../src/shard/search.js';

function cross<T>(value: T, transfer: ArrayBuffer[]): Promise<T> {
  const { port1, port2 }: { port1: MessagePort; port2: MessagePort } = new MessageChannel();
  return new Promise<T>((resolve) => {
    port2.once('message', (received: T) => {
      port1.close();
      port2.close();
      resolve(received);
    });
    port1.postMessage(value, transfer);
  });
}

const params = { hnswEf: 64, exact: false, quantization: null, indexedOnly: false, idfCorpus: null };
const spec = (query: SearchSpec['query']): SearchSpec => ({ using: '', query, filter: null, top: 10, params, scoreThreshold: null, withPayload: { all: false }, withVector: false });

t.test('a search task crosses with its dense vectors as f32 and comes back as it was sent', async (t) => {
  const dense = [0.1, -2.5, 3, 1e-3];
  const message: TaskMessage = {
    task: {
      type: 'search',
      shard: 'c/0',
      searches: [
        spec({ kind: 'nearest', vector: dense }),
        spec({ kind: 'nearest', vector: { indices: new Uint32Array([1, 5]), values: new Float32Array([0.5, 0.25]) } }),
        spec({ kind: 'custom', objective: { type: 'best_score', positives: [[1, 2, 3, 4]], negatives: [] } }),
      ],
    },
    deadline: null,
  };
  const packed = packTask(message);
  t.equal(packed.transfer.length, 1, 'one buffer handed over: the dense query');
  const received = unpackTask(await cross(packed.value, packed.transfer));
  const expected = structuredClone(message);
  (expected.task as { searches: SearchSpec[] }).searches[0].query = { kind: 'nearest', vector: Array.from(Float32Array.from(dense)) };
  t.same(received, expected, 'the same task, the dense vector rounded to f32 as the engine stores queries');
  t.same((message.task as { searches: SearchSpec[] }).searches[0].query, { kind: 'nearest', vector: dense }, 'the sent spec is untouched (other shards get it too)');
});

t.test('hits come back as they were found: plain lists in one block, others as they are', async (t) => {
  const message: TaskMessage = { task: { type: 'search', shard: 'c/0', searches: [] }, deadline: null };
  const usage = { cpu: 5, payload_io_read: 0, payload_io_write: 0, payload_index_io_read: 0, payload_index_io_write: 0, vector_io_read: 0, vector_io_write: 0 };
  const plain: ScoredView[] = [{ id: 7, score: 0.9125, version: 3 }, { id: 2 ** 53 - 1, score: -1.5, version: 0 }, { id: 0, score: 0.1 + 0.2, version: 12 }];
  const other: ScoredView[] = [{ id: 5, score: 2.25, version: 1 }];
  const reply: TaskReply<ScoredView[][]> = { ok: [plain, [], other], usage };
  const packed = packReply(message, reply);
  t.equal(packed.transfer.length, 1, 'plain hit lists go as one buffer');
  t.same(unpackReply(message, await cross(packed.value, packed.transfer)), reply, 'the same hits, in the same lists and order, with the usage report');

  const uuids: ScoredView[] = [{ id: '936da01f-9abd-4d9d-80c7-02af85c822a8', score: 0.5, version: 1 }];
  const big: ScoredView[] = [{ id: 2n ** 60n, score: 0.5, version: 1 }];
  const withPayload: ScoredView[] = [{ id: 1, score: 0.5, version: 1, payload: { a: 1 } }];
  for (const [name, list] of [['uuid ids', uuids], ['ids past 2^53', big], ['a payload', withPayload]] as const) {
    const mixed: TaskReply<ScoredView[][]> = { ok: [plain, list], usage };
    const asIs = packReply(message, mixed);
    t.equal(asIs.transfer.length, 0, `hits with ${name} go as they are`);
    t.same(unpackReply(message, await cross(asIs.value, asIs.transfer)), mixed, `and come back the same (${name})`);
  }

  const failed: TaskReply<unknown> = { error: { quiverError: 'NotFound', statusCode: 404, message: 'Not found: shard c/0 is not open' } };
  t.same(unpackReply(message, await cross(packReply(message, failed).value, [])), failed, 'an error reply crosses as it is');
});
