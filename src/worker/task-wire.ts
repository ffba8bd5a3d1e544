// How search tasks and their hits cross between the main thread and a shard worker. A structured
// clone copies a JavaScript array number by number and rebuilds every hit object on the other
// side; a typed array goes as one block of bytes (and a transferred one is not even copied). So a
// nearest search's dense query vector travels as a Float32Array (the engine keeps queries in f32,
// so nothing it sees changes), and plain hits (numeric ids, no payload, no vectors) come back in
// one Float64Array. Anything else crosses as it is.

import type { ScoredView, SearchSpec } from '../shard/search.js';
import type { ShardTask, TaskMessage, TaskReply, TaskResults } from './tasks.js';

type SearchTask = Extract<ShardTask, { type: 'search' }>;

/** A search spec on the wire: a nearest search's dense vector as f32. */
type WireSpec = Omit<SearchSpec, 'query'> & { query: SearchSpec['query'] | { kind: 'nearest'; vector: Float32Array } };

/**
 * Every hit list of a search reply in one block (one transferred buffer costs less to post than
 * several, or than the hit objects): the number of lists L, each list's length, then per list its
 * ids, its scores and its versions.
 */
type HitBlock = Float64Array;

/** A task message as it is posted, with the buffers it hands over. */
export interface Packed<T> {
  value: T;
  transfer: ArrayBuffer[];
}

function isSearch(message: TaskMessage): message is TaskMessage & { task: SearchTask } {
  return message.task.type === 'search';
}

/** The message to post for `message` (a search's dense query vectors as transferred f32 arrays). */
export function packTask(message: TaskMessage): Packed<TaskMessage> {
  if (!isSearch(message)) return { value: message, transfer: [] };
  const transfer: ArrayBuffer[] = [];
  const searches = message.task.searches.map((spec): WireSpec => {
    if (spec.query.kind !== 'nearest' || !Array.isArray(spec.query.vector)) return spec;
    const vector = Float32Array.from(spec.query.vector);
    transfer.push(vector.buffer);
    return { ...spec, query: { kind: 'nearest', vector } };
  });
  // The wire form is read back by unpackTask alone, which restores the declared types.
  return { value: { ...message, task: { ...message.task, searches: searches as SearchSpec[] } }, transfer };
}

/** The task as the worker runs it: dense query vectors as number arrays again. */
export function unpackTask(message: TaskMessage): TaskMessage {
  if (!isSearch(message)) return message;
  const searches = (message.task.searches as WireSpec[]).map((spec): SearchSpec => {
    const { query } = spec;
    if (query.kind !== 'nearest' || !(query.vector instanceof Float32Array)) return spec as SearchSpec;
    return { ...spec, query: { kind: 'nearest', vector: numbers(query.vector) } };
  });
  return { ...message, task: { ...message.task, searches } };
}

/**
 * The values of `vector` as a number array: a counted loop, since Array.from walks a typed array
 * through its iterator (~6 us for 128 values against ~0.4 us, on every search task).
 */
function numbers(vector: Float32Array): number[] {
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i];
  return out;
}

/** Hits that are only an id (a number), a score and a version: the common search answer. */
function plain(hits: ScoredView[]): boolean {
  return hits.every((h) => typeof h.id === 'number' && h.payload === undefined && h.vectors === undefined && h.shardKey === undefined && h.orderValue === undefined);
}

function toBlock(lists: ScoredView[][]): Float64Array<ArrayBuffer> {
  const block = new Float64Array(1 + lists.length + 3 * lists.reduce((n, hits) => n + hits.length, 0));
  block[0] = lists.length;
  let at = 1 + lists.length;
  lists.forEach((hits, l) => {
    const n = (block[1 + l] = hits.length);
    hits.forEach((h, i) => {
      block[at + i] = h.id as number;
      block[at + n + i] = h.score;
      block[at + 2 * n + i] = h.version;
    });
    at += 3 * n;
  });
  return block;
}

function fromBlock(block: HitBlock): ScoredView[][] {
  const lists: ScoredView[][] = [];
  let at = 1 + block[0];
  for (let l = 0; l < block[0]; l++) {
    const n = block[1 + l];
    const hits: ScoredView[] = new Array(n);
    for (let i = 0; i < n; i++) hits[i] = { id: block[at + i], score: block[at + n + i], version: block[at + 2 * n + i] };
    lists.push(hits);
    at += 3 * n;
  }
  return lists;
}

/** The reply to post for `message`'s task: a search's hit lists as one transferred block when they are all plain. */
export function packReply<R extends object>(message: TaskMessage, reply: R): Packed<R> {
  if (!isSearch(message) || !('ok' in reply)) return { value: reply, transfer: [] };
  const lists = reply.ok as TaskResults['search'];
  if (!lists.every(plain)) return { value: reply, transfer: [] };
  const block = toBlock(lists);
  return { value: { ...reply, ok: block }, transfer: [block.buffer] };
}

/** The reply as the supervisor hands it on: a hit block as hit objects again. */
export function unpackReply(message: TaskMessage, reply: TaskReply<unknown>): TaskReply<unknown> {
  if (!isSearch(message) || !('ok' in reply) || !(reply.ok instanceof Float64Array)) return reply;
  return { ...reply, ok: fromBlock(reply.ok) };
}
