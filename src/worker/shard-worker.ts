// Entry point of a shard worker thread (run by Piscina, one thread per pool). The thread owns
// the shards opened in it. Piscina hands it one task, the port its supervisor sends every other
// message through (task-port.ts), which runs them one at a time, so each shard is single-writer.

import { workerData } from 'node:worker_threads';
import { isQuiverError, NotFound, ServiceError, toWire } from '../errors.js';
import { missingIndexForFacet } from '../messages.js';
import { EngineAbort } from '../engine/index.js';
import { isFacetIndex } from '../shard/payload-index/types.js';
import { retrievePoints, samplePoints, scrollPoints } from '../shard/reads.js';
import { Shard, type UpdateOutcome } from '../shard/shard.js';
import { shardStats } from '../shard/stats.js';
import { searchShard } from '../shard/search.js';
import { runShardQueries } from '../shard/shard-query.js';
import { formulaHits } from '../shard/formula-rescore.js';
import { maximalMarginalRelevance } from '../shard/mmr.js';
import { settleShardDirectory, stageShardStore, swapShardStore, writeShardPart } from '../shard/snapshot-part.js';
import { discard, downloadPart, isRemotePart } from '../shard/part-download.js';
import { checkDeadline, underDeadline } from '../shard/deadline.js';
import { addUsage, emptyUsage, type HardwareUsage } from '../shard/hardware.js';
import { measured } from './task-usage.js';
import { injectFault } from './faults.js';
import { serve } from './task-port.js';
import type { Connect, ShardTask, TaskMessage, TaskReply, TaskResults, UpdateBatch, UpdateBatchReply, UpdateReply, UpdateTask, UsageReport, WorkerSettings } from './tasks.js';
import type { WireError } from '../errors.js';

const shards = new Map<string, Shard>();

/** Per shard, what its wait=false updates used once applied, not reported yet. */
const deferredUsage = new Map<string, HardwareUsage>();

function deferredOf(shard: string): HardwareUsage {
  let usage = deferredUsage.get(shard);
  if (!usage) deferredUsage.set(shard, (usage = emptyUsage()));
  return usage;
}

/** The shard's deferred usage, to go with a reply (once). */
function takeDeferred(shard: string): Pick<UsageReport, 'deferred'> {
  const usage = deferredUsage.get(shard);
  if (!usage) return {};
  deferredUsage.delete(shard);
  return { deferred: usage };
}

/** An open shard with its pending wait=false applies done, so the task sees every acknowledged write. */
async function shardOf(key: string): Promise<Shard> {
  const shard = shards.get(key);
  if (!shard) throw new NotFound(`shard ${key} is not open`);
  await shard.settle();
  return shard;
}

async function run(task: ShardTask): Promise<TaskResults[ShardTask['type']]> {
  switch (task.type) {
    case 'open': {
      if (shards.has(task.shard)) return { lastOp: (await shardOf(task.shard)).lastOp };
      await settleShardDirectory(task.spec.path);
      const shard = await Shard.open(task.spec);
      shards.set(task.shard, shard);
      return { lastOp: shard.lastOp };
    }
    case 'reopen': {
      await shards.get(task.shard)?.close();
      const shard = await Shard.open(task.spec);
      shards.set(task.shard, shard);
      return { lastOp: shard.lastOp };
    }
    // A dropped shard's folder is the replica layer's to remove (it also removes folders no worker
    // opened), so for the worker a drop is a close.
    case 'close':
    case 'drop': {
      await shards.get(task.shard)?.close();
      shards.delete(task.shard);
      return null;
    }
    case 'apply':
      // The supervisor sends updates in batches (runUpdates): what comes here is a dry run.
      await (await shardOf(task.shard)).apply(task.ops, task.opId, task.clock, task.wait, task.dryRun);
      return null;
    case 'recovery_point':
      return (await shardOf(task.shard)).recoveryPoint();
    case 'log_after':
      return (await shardOf(task.shard)).entriesAfter(task.after, task.limit);
    case 'retrieve':
      return retrievePoints(await shardOf(task.shard), task.ids, task.shape);
    case 'scroll':
      return scrollPoints(await shardOf(task.shard), task.filter, task.from, task.limit, task.shape, task.orderBy);
    case 'search': {
      const shard = await shardOf(task.shard);
      return task.searches.map((spec) => {
        checkDeadline();
        return searchShard(shard, spec);
      });
    }
    case 'query':
      return runShardQueries(await shardOf(task.shard), task.queries);
    case 'formula':
      return formulaHits(await shardOf(task.shard), task.step, task.prefetches, task.limit);
    case 'mmr':
      return maximalMarginalRelevance(task.candidates, task.using, task.distance, task.lambda, task.limit);
    case 'facet': {
      const shard = await shardOf(task.shard);
      const index = shard.index(task.key);
      if (!index || !isFacetIndex(index)) throw missingIndexForFacet(task.key);
      return [...index.facet(task.filter ? shard.matching(task.filter) : null)];
    }
    case 'count':
      return (await shardOf(task.shard)).matching(task.filter).count();
    case 'sample':
      return samplePoints(await shardOf(task.shard), task.filter, task.limit, task.shape);
    case 'stats':
      return shardStats(await shardOf(task.shard));
    case 'create_index':
      (await shardOf(task.shard)).createIndex(task.index);
      return null;
    case 'drop_index':
      (await shardOf(task.shard)).dropIndex(task.key);
      return null;
    case 'optimizations':
      return (await shardOf(task.shard)).optimizations();
    case 'configure_optimizer':
      (await shardOf(task.shard)).configureOptimizer(task.optimizer);
      return null;
    case 'snapshot': {
      const shard = await shardOf(task.shard);
      return { points: await writeShardPart(shard, task.path), lastOp: shard.lastOp };
    }
    case 'restore': {
      // A part another peer serves (a snapshot transfer) is downloaded first, then restored as a local one.
      const part = isRemotePart(task.part) ? await downloadPart(task.part, task.spec.path) : task.part;
      let staged: string;
      try {
        staged = await stageShardStore(task.spec, part, task.lastOp, task.route);
      } finally {
        if (part !== task.part) await discard(part.path);
      }
      await shards.get(task.shard)?.close();
      shards.delete(task.shard);
      const { shard, failure } = await swapShardStore(staged, task.spec);
      if (shard) shards.set(task.shard, shard);
      if (failure) throw failure;
      return { lastOp: shard!.lastOp };
    }
  }
}

/** Only in a server started for fault-injection tests (see faults.ts). */
const injecting = (workerData as WorkerSettings | null)?.faults === true;

/** What a failure is to the main thread: a Quiver error as data, or a fault (a trap) that ends the worker. */
function failureOf(err: unknown): { error: WireError } | { fault: string } {
  if (isQuiverError(err)) return { error: toWire(err) };
  if (err instanceof WebAssembly.RuntimeError || err instanceof EngineAbort) return { fault: `WebAssembly trap: ${err.message}` };
  return { error: toWire(new ServiceError(err instanceof Error ? err.message : String(err))) };
}

/** A batch of updates: each shard takes its share, in order, as one group (one synced log write). */
async function runUpdates(updates: UpdateTask[]): Promise<UpdateBatchReply> {
  const byShard = new Map<string, number[]>();
  updates.forEach((u, i) => byShard.set(u.shard, [...(byShard.get(u.shard) ?? []), i]));
  const replies: UpdateReply[] = new Array(updates.length);
  for (const [key, indexes] of byShard) {
    let outcomes: UpdateOutcome[];
    let earlier: Pick<UsageReport, 'deferred'> = {};
    // A waiting update is applied before its reply goes, so it reports its own usage; one that
    // does not wait is applied later, into the shard's deferred usage.
    const usages = indexes.map((i) => (updates[i].wait ? emptyUsage() : null));
    try {
      const shard = await shardOf(key);
      // Earlier wait=false updates are applied now (shardOf settles them): their usage is complete.
      earlier = takeDeferred(key);
      outcomes = await shard.applyGroup(indexes.map((i, j) => ({ ...updates[i], usage: usages[j] ?? deferredOf(key) })));
    } catch (error) {
      outcomes = indexes.map(() => ({ ok: false, error }));
    }
    for (const [j, outcome] of outcomes.entries()) {
      const own = usages[j];
      const usage = own ? { usage: own } : {};
      if (outcome.ok) {
        replies[indexes[j]] = { ok: null, ...usage };
        continue;
      }
      const failure = failureOf(outcome.error);
      if ('fault' in failure) return failure;
      replies[indexes[j]] = { ...failure, ...usage };
    }
    Object.assign(replies[indexes[0]], earlier);
  }
  return { replies };
}

/** Answers every message (a rejected one would be taken for a dead worker); a trap is a fault. */
async function handle(message: TaskMessage | UpdateBatch): Promise<TaskReply<TaskResults[ShardTask['type']]> | UpdateBatchReply> {
  if ('updates' in message) {
    try {
      if (injecting) for (const update of message.updates) await injectFault(update);
      return await runUpdates(message.updates);
    } catch (err) {
      const failure = failureOf(err);
      return 'fault' in failure ? failure : { replies: message.updates.map(() => failure) };
    }
  }
  const { task, deadline } = message;
  const usage = emptyUsage();
  try {
    if (injecting) await injectFault(task);
    const ok = await underDeadline(deadline, () => measured(usage, () => run(task)));
    return { ok, usage, ...takeDeferred(task.shard) };
  } catch (err) {
    const failure = failureOf(err);
    return 'fault' in failure ? failure : { ...failure, usage, ...takeDeferred(task.shard) };
  }
}

/** Piscina's one task for this thread: from now on, messages come through the supervisor's port. */
export default function connect(connection: Connect): null {
  serve(connection, handle);
  return null;
}
