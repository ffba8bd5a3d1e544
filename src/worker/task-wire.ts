// How search tasks and their hits cross between the main thread and a shard worker. A structured
// clone copies a JavaScript array number by number and rebuilds every hit object on the other
// side; a typed array goes as one block of bytes (and a transferred one is not even copied). So a
// nearest search's dense query vector travels as a Float32Array (the engine keeps queries in f32,
// so nothing it sees changes), and a list of plain hits (numeric ids, no payload, no vectors)
// comes back as three typed arrays. Anything else crosses as it is.

import type { ScoredView, SearchSpec } from '../shard/search.js';
import type { ShardTask, TaskMessage, TaskReply, TaskResults } from './tasks.js';

type SearchTask = Extract<ShardTask, { type: 'search' }>;

/** A search spec on the wire: a nearest search's dense vector as f32. */
type WireSpec = Omit<SearchSpec, 'query'> & { query: SearchSpec['query'] | { kind: 'nearest'; vector: Float32Array } };

/** A list of plain hits as columns; position i of each is hit i. */
interface HitColumns {
  ids: Float64Array;
  scores: Float64Array;
  versions: Float64Array;
}

type WireHits = ScoredView[] | HitColumns;

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
    return { ...spec, query: { kind: 'nearest', vector: Array.from(query.vector) } };
  });
  return { ...message, task: { ...message.task, searches } };
}

/** Hits that are only an id (a number), a score and a version: the common search answer. */
function plain(hits: ScoredView[]): boolean {
  return hits.every((h) => typeof h.id === 'number' && h.payload === undefined && h.vectors === undefined && h.shardKey === undefined && h.orderValue === undefined);
}

function columns(hits: ScoredView[], transfer: ArrayBuffer[]): WireHits {
  if (!plain(hits)) return hits;
  const n = hits.length;
  const ids = new Float64Array(n);
  const scores = new Float64Array(n);
  const versions = new Float64Array(n);
  hits.forEach((h, i) => {
    ids[i] = h.id as number;
    scores[i] = h.score;
    versions[i] = h.version;
  });
  transfer.push(ids.buffer, scores.buffer, versions.buffer);
  return { ids, scores, versions };
}

function rows(hits: WireHits): ScoredView[] {
  if (Array.isArray(hits)) return hits;
  return Array.from(hits.ids, (id, i) => ({ id, score: hits.scores[i], version: hits.versions[i] }));
}

/** The reply to post for `message`'s task: a search's plain hit lists as transferred columns. */
export function packReply<R extends object>(message: TaskMessage, reply: R): Packed<R> {
  const transfer: ArrayBuffer[] = [];
  if (!isSearch(message) || !('ok' in reply)) return { value: reply, transfer };
  const lists = (reply.ok as TaskResults['search']).map((hits) => columns(hits, transfer));
  return { value: { ...reply, ok: lists }, transfer };
}

/** The reply as the supervisor hands it on: hit columns as hit objects again. */
export function unpackReply(message: TaskMessage, reply: TaskReply<unknown>): TaskReply<unknown> {
  if (!isSearch(message) || !('ok' in reply)) return reply;
  return { ...reply, ok: (reply.ok as WireHits[]).map(rows) };
}
