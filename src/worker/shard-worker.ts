// Entry point of a shard worker thread (run by Piscina, one thread per pool). The thread owns
// the shards opened in it; Piscina hands it one task at a time, so each shard is single-writer.

import { rm } from 'node:fs/promises';
import { workerData } from 'node:worker_threads';
import { isQuiverError, NotFound, ServiceError, toWire } from '../errors.js';
import type { PointId } from '../model.js';
import { missingIndexForFacet, missingRangeIndexForOrderBy } from '../api/messages.js';
import { EngineAbort, type Bitset } from '../engine/index.js';
import { isFacetIndex, isOrderedIndex } from '../shard/payload-index/types.js';
import { selectPayload, selectVectors, type PointView } from '../shard/selectors.js';
import { compareIds, Shard } from '../shard/shard.js';
import { searchShard } from '../shard/search.js';
import { settleShardDirectory, stageShardStore, swapShardStore, writeShardPart } from '../snapshot/shard-part.js';
import { checkDeadline, underDeadline } from '../shard/deadline.js';
import { injectFault } from './faults.js';
import type { ReadShape, ShardTask, TaskMessage, TaskReply, TaskResults, WorkerSettings } from './tasks.js';

const shards = new Map<string, Shard>();
const paths = new Map<string, string>();

function shardOf(key: string): Shard {
  const shard = shards.get(key);
  if (!shard) throw new NotFound(`shard ${key} is not open`);
  return shard;
}

function view(shard: Shard, id: PointId, shape: ReadShape): PointView | null {
  const record = shard.record(id);
  if (!record) return null;
  const out: PointView = { id };
  const payload = selectPayload(record.payload ?? {}, shape.withPayload);
  if (payload) out.payload = payload;
  const vectors = selectVectors(record.vectors, shape.withVector);
  if (vectors) out.vectors = vectors;
  return out;
}

/** First index of `ids` (sorted) not below `from`. */
function lowerBound(ids: PointId[], from: PointId): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds(ids[mid], from) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `k` distinct elements of `items` in random order: a partial Fisher-Yates shuffle. */
function randomSubset<T>(items: T[], k: number): T[] {
  const n = Math.min(k, items.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (items.length - i));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items.slice(0, n);
}

/** Scroll by the values of an ordered payload index; a point with several values comes once, at its first. */
function scrollOrdered(shard: Shard, allowed: Bitset, task: Extract<ShardTask, { type: 'scroll' }>): PointView[] {
  const orderBy = task.orderBy!;
  const index = shard.index(orderBy.key);
  if (!index || !isOrderedIndex(index)) throw missingRangeIndexForOrderBy(orderBy.key);
  const out: PointView[] = [];
  const seen = new Set<number>();
  for (const entry of index.ordered(orderBy.direction, orderBy.startFrom ?? undefined)) {
    if (out.length >= task.limit) break;
    if (seen.has(entry.offset) || !allowed.has(entry.offset)) continue;
    seen.add(entry.offset);
    out.push({ ...view(shard, shard.pointId(entry.offset), task.shape)!, orderValue: entry.value });
  }
  return out;
}

function payloadsBytes(shard: Shard): number {
  let bytes = 0;
  for (let offset = 0; offset < shard.size; offset++) {
    const payload = shard.payload(offset);
    if (payload !== undefined) bytes += Buffer.byteLength(JSON.stringify(payload));
  }
  return bytes;
}

async function run(task: ShardTask): Promise<TaskResults[ShardTask['type']]> {
  switch (task.type) {
    case 'open': {
      const existing = shards.get(task.shard);
      if (existing) return { lastOp: existing.lastOp };
      await settleShardDirectory(task.spec.path);
      const shard = await Shard.open(task.spec);
      shards.set(task.shard, shard);
      paths.set(task.shard, task.spec.path);
      return { lastOp: shard.lastOp };
    }
    case 'reopen': {
      await shards.get(task.shard)?.close();
      const shard = await Shard.open(task.spec);
      shards.set(task.shard, shard);
      return { lastOp: shard.lastOp };
    }
    case 'close': {
      await shards.get(task.shard)?.close();
      shards.delete(task.shard);
      return null;
    }
    case 'drop': {
      await shards.get(task.shard)?.close();
      shards.delete(task.shard);
      const path = paths.get(task.shard);
      if (path) await rm(path, { recursive: true, force: true });
      paths.delete(task.shard);
      return null;
    }
    case 'apply':
      await shardOf(task.shard).apply(task.ops, task.opId, task.dryRun);
      return null;
    case 'retrieve': {
      const shard = shardOf(task.shard);
      return task.ids.map((id) => view(shard, id, task.shape)).filter((p): p is PointView => p !== null);
    }
    case 'scroll': {
      const shard = shardOf(task.shard);
      const allowed = shard.matching(task.filter);
      if (task.orderBy) return scrollOrdered(shard, allowed, task);
      const ids = shard.orderedIds();
      const out: PointView[] = [];
      for (let i = task.from === null ? 0 : lowerBound(ids, task.from); i < ids.length && out.length < task.limit; i++) {
        const offset = shard.offsetOf(ids[i])!;
        if (allowed.has(offset)) out.push(view(shard, ids[i], task.shape)!);
      }
      return out;
    }
    case 'search': {
      const shard = shardOf(task.shard);
      return task.searches.map((spec) => {
        checkDeadline();
        return searchShard(shard, spec);
      });
    }
    case 'facet': {
      const shard = shardOf(task.shard);
      const index = shard.index(task.key);
      if (!index || !isFacetIndex(index)) throw missingIndexForFacet(task.key);
      return [...index.facet(task.filter ? shard.matching(task.filter) : null)];
    }
    case 'count':
      return shardOf(task.shard).matching(task.filter).count();
    case 'sample': {
      const shard = shardOf(task.shard);
      const matching = [...shard.matching(task.filter)];
      const points = randomSubset(matching, task.limit).map((offset) => view(shard, shard.pointId(offset), task.shape)!);
      return { points, matching: matching.length };
    }
    case 'stats': {
      const shard = shardOf(task.shard);
      const spec = shard.describe();
      return {
        points: shard.pointCount,
        vectors: Object.fromEntries(spec.vectors.map((v) => [v.name, shard.vectorCount(v.name)])),
        indexedPoints: Object.fromEntries(spec.indexes.map((i) => [i.key, shard.indexedPoints(i.key)])),
        lastOp: shard.lastOp,
        vectorsBytes: spec.vectors.reduce((n, v) => n + shard.vectorCount(v.name) * v.size * Float32Array.BYTES_PER_ELEMENT, 0),
        payloadsBytes: payloadsBytes(shard),
      };
    }
    case 'create_index':
      shardOf(task.shard).createIndex(task.index);
      return null;
    case 'drop_index':
      shardOf(task.shard).dropIndex(task.key);
      return null;
    case 'optimizations':
      return shardOf(task.shard).optimizations();
    case 'configure_optimizer':
      shardOf(task.shard).configureOptimizer(task.optimizer);
      return null;
    case 'snapshot': {
      const shard = shardOf(task.shard);
      return { points: await writeShardPart(shard, task.path), lastOp: shard.lastOp };
    }
    case 'restore': {
      const staged = await stageShardStore(task.spec, task.part, task.lastOp, task.route);
      await shards.get(task.shard)?.close();
      shards.delete(task.shard);
      const { shard, failure } = await swapShardStore(staged, task.spec);
      if (shard) {
        shards.set(task.shard, shard);
        paths.set(task.shard, task.spec.path);
      }
      if (failure) throw failure;
      return { lastOp: shard!.lastOp };
    }
  }
}

/** Only in a server started for fault-injection tests (see faults.ts). */
const injecting = (workerData as WorkerSettings | null)?.faults === true;

/** Answers every task (a rejected task would be taken for a dead worker); a trap is a fault. */
export default async function handle({ task, deadline }: TaskMessage): Promise<TaskReply<TaskResults[ShardTask['type']]>> {
  try {
    if (injecting) await injectFault(task);
    return { ok: await underDeadline(deadline, () => run(task)) };
  } catch (err) {
    if (isQuiverError(err)) return { error: toWire(err) };
    if (err instanceof WebAssembly.RuntimeError || err instanceof EngineAbort) return { fault: `WebAssembly trap: ${err.message}` };
    return { error: toWire(new ServiceError(err instanceof Error ? err.message : String(err))) };
  }
}
