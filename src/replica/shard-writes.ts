// How one request writes to several shards so that a refused request changes none of them,
// without a lock over the whole collection, and so that it still holds when the shards' replica
// sets live on different peers:
//   1. lock the involved replica sets in shard-id order (every writer takes them in that order,
//      so two writers never wait on each other in a cycle);
//   2. take the request's operation ids (under the locks, so each shard sees increasing ids);
//   3. when a part may be refused (an operation on a point that must exist), dry-run every part
//      on a replica of its set: the set is locked, so no other write changes the answer before
//      the apply;
//   4. send every part to be applied, each logged under the clock tag of the request's last id,
//      and let go of the locks: a replica takes updates in the order they were sent (replica.ts),
//      so the next writer's parts queue behind these without waiting for them, and a shard can
//      log a run of queued updates with one synced write. With `wait` the shards answer once
//      the part is durable in their logs and applied, without once it is durable.

import type { WriteOp } from '../shard/write-ops.js';
import type { OperationClock } from './operation-clock.js';
import type { ReplicaSet } from './replica-set.js';

/** Runs `job` holding the write locks of `sets`, taken one by one in shard-id order. */
export function lockedInOrder<T>(sets: readonly ReplicaSet[], job: () => Promise<T>): Promise<T> {
  const ordered = [...sets].sort((a, b) => a.id - b.id);
  const hold = (i: number): Promise<T> => (i === ordered.length ? job() : ordered[i].serially(() => hold(i + 1)));
  return hold(0);
}

/**
 * Applies the parts of a request of `count` operations, each to its replica set, and answers
 * the first of the request's operation ids. Every shard records the last one, so the clock
 * resumes after all of them on restart. `checkFirst` dry-runs every part before any applies.
 */
export async function applyAcross(parts: ReadonlyMap<ReplicaSet, WriteOp[]>, clock: OperationClock, count: number, { checkFirst, wait }: { checkFirst: boolean; wait: boolean }): Promise<number> {
  const { first, applied } = await lockedInOrder([...parts.keys()], async () => {
    const first = clock.take(count);
    const opId = first + count - 1;
    const tag = clock.tagOf(opId);
    // A dry run only reads the shard, so one replica's answer is the set's.
    if (checkFirst) await Promise.all([...parts].map(([set, ops]) => set.read({ type: 'apply', ops, opId, clock: tag, wait, dryRun: true }, null)));
    // Sent, not awaited: the locks only order the sending.
    return { first, applied: Promise.all([...parts].map(([set, ops]) => set.apply({ type: 'apply', ops, opId, clock: tag, wait, dryRun: false }))) };
  });
  // A part forwarded to its leader stands under the leader's numbering; as in Qdrant, the
  // answer carries the first part's.
  const [firstPart] = await applied;
  return firstPart ?? first;
}
