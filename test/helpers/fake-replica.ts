// A shard replica held in memory, for tests of the collection and replica layers without a
// server or workers. It keeps points by id, records every task it receives, and can be told to
// fail a task, or to hold one until released or until the deadline it carries runs out. As the
// replica contract asks (and a worker thread does), it runs its tasks one at a time, in the
// order they were sent.

import { pointNotFound } from '../../src/messages.js';
import { ServiceError, type QuiverError } from '../../src/errors.js';
import type { PointId } from '../../src/model.js';
import { deadlineOf, timeoutError, type DeadlineBudget } from '../../src/shard/deadline.js';
import type { PointRecord, WriteOp } from '../../src/shard/write-ops.js';
import { matchesPayload } from '../../src/shard/filter/evaluate.js';
import type { Filter } from '../../src/shard/filter/types.js';
import type { ForwardedUpdate, ReplicaResult, ReplicaTask, ShardReplica } from '../../src/replica/replica.js';
import type { ShardId } from '../../src/replica/shard-id.js';
import { WriteQueue } from '../../src/write-queue.js';
import { ClockMap } from '../../src/shard/clock-map.js';

export interface Received {
  task: ReplicaTask;
  deadline: DeadlineBudget | null;
}

interface Hold {
  type: ReplicaTask['type'];
  arrived: Promise<void>;
  arrive: () => void;
  release: () => void;
  released: Promise<void>;
}

export class FakeReplica implements ShardReplica {
  readonly points = new Map<PointId, PointRecord>();
  readonly received: Received[] = [];
  /** Operation ids of the applies that changed the points, in the order they did. */
  readonly applied: number[] = [];
  /** The clock map a shard would keep (adopted maps replace it, as a transfer's clearing does). */
  private clocks = new ClockMap();
  private readonly failures: { type: ReplicaTask['type']; error: Error }[] = [];
  private readonly holds: Hold[] = [];
  private readonly queue = new WriteQueue();

  /** Updates forwarded to this replica as its set's leader, in the order received. */
  readonly forwarded: ForwardedUpdate[] = [];
  private readonly forwardFailures: Error[] = [];

  /** A replica of `shard` on `peer` (0: a single node's). */
  constructor(readonly shard: ShardId, readonly peer = 0) {}

  /** The next task of `type` fails with `error`. */
  failNext(type: ReplicaTask['type'], error: Error): void {
    this.failures.push({ type, error });
  }

  /**
   * The next task of `type` waits: until `release()` (then runs), or until its deadline runs out
   * (then fails with the timeout error, as a real replica stops a task whose time is up).
   */
  hold(type: ReplicaTask['type']): { arrived: Promise<void>; release: () => void } {
    let arrive!: () => void;
    let release!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.push({ type, arrived, arrive, release, released });
    return { arrived, release };
  }

  /** The next update forwarded to this replica fails with `error`. */
  failNextForward(error: Error): void {
    this.forwardFailures.push(error);
  }

  /** As a leader on another peer would: applies the update under an operation id of its own. */
  async forward(update: ForwardedUpdate): Promise<number> {
    this.forwarded.push(update);
    const failure = this.forwardFailures.shift();
    if (failure) throw failure;
    const opId = Math.max(0, ...this.applied) + 1;
    await this.run({ type: 'apply', ops: update.ops, opId, clock: { peer: this.peer, clockId: 0, tick: opId }, wait: update.wait, dryRun: false }, null);
    return opId;
  }

  /** Tasks received of one type. */
  tasks<K extends ReplicaTask['type']>(type: K): Extract<ReplicaTask, { type: K }>[] {
    return this.received.map((r) => r.task).filter((t): t is Extract<ReplicaTask, { type: K }> => t.type === type);
  }

  run<T extends ReplicaTask>(task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>> {
    this.received.push({ task, deadline });
    return this.queue.enqueue(() => this.execute(task, deadline));
  }

  private async execute<T extends ReplicaTask>(task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>> {
    const failure = this.failures.findIndex((f) => f.type === task.type);
    if (failure >= 0) throw this.failures.splice(failure, 1)[0].error;
    const held = this.holds.findIndex((h) => h.type === task.type);
    if (held >= 0) {
      const hold = this.holds.splice(held, 1)[0];
      hold.arrive();
      await (deadline ? untilExpiry(hold.released, deadline) : hold.released);
    }
    return this.answer(task) as ReplicaResult<T>;
  }

  private answer(task: ReplicaTask): unknown {
    switch (task.type) {
      case 'open':
        return { lastOp: Math.max(0, ...this.applied) };
      case 'close':
      // The fake keeps no indexes: an index task is only recorded.
      case 'create_index':
      case 'drop_index':
        return null;
      case 'drop':
        this.points.clear();
        return null;
      case 'apply':
        this.apply(task.ops, task.opId, task.dryRun);
        if (!task.dryRun) {
          if (task.adopt) this.clocks = new ClockMap(task.adopt);
          this.clocks.advance(task.clock);
        }
        return null;
      case 'recovery_point':
        return { clocks: this.clocks.tags(), cutoff: [], firstSeq: 1, lastSeq: this.applied.length, appliedSeq: this.applied.length };
      case 'retrieve':
        return task.ids.filter((id) => this.points.has(id)).map((id) => ({ id, payload: this.points.get(id)!.payload ?? {} }));
      case 'count':
        return [...this.points.values()].filter((p) => matches(task.filter, p)).length;
      case 'scroll': {
        // The matching points from `from` on, in id order, whole (a transfer's read): numeric ids only.
        if (task.orderBy) throw unsupported('an ordered scroll');
        const ids = [...this.points.keys()].map(Number).sort((a, b) => a - b)
          .filter((id) => (task.from === null || id >= Number(task.from)) && matches(task.filter, this.points.get(id)!));
        return ids.slice(0, task.limit).map((id) => ({ id, vectors: this.points.get(id)!.vectors, payload: this.points.get(id)!.payload ?? {} }));
      }
      default:
        throw unsupported(`task ${task.type}`);
    }
  }

  /** Upserts, deletes and set_payload, by id or by filter (by id it fails on a missing point): all checked before any applies. */
  private apply(ops: WriteOp[], opId: number, dryRun: boolean): void {
    const staged = new Map(this.points);
    for (const op of ops) {
      if (op.kind === 'upsert') for (const p of op.points) staged.set(p.id, { ...p, version: opId });
      else if (op.kind === 'delete' && 'ids' in op.target) for (const id of op.target.ids) staged.delete(id);
      else if (op.kind === 'delete' && 'filter' in op.target) {
        for (const [id, p] of staged) if (matches(op.target.filter, p)) staged.delete(id);
      } else if (op.kind === 'set_payload' && 'filter' in op.target) {
        for (const [id, p] of staged) if (matches(op.target.filter, p)) staged.set(id, { ...p, payload: { ...p.payload, ...op.payload }, version: opId });
      } else if (op.kind === 'set_payload' && 'ids' in op.target) {
        for (const id of op.target.ids) {
          const point = staged.get(id);
          if (!point) throw pointNotFound(id);
          staged.set(id, { ...point, payload: { ...point.payload, ...op.payload }, version: opId });
        }
      } else throw unsupported(`operation ${op.kind}`);
    }
    if (dryRun) return;
    this.points.clear();
    for (const [id, p] of staged) this.points.set(id, p);
    this.applied.push(opId);
  }
}

/** Whether a point matches a filter (null: any), as a shard checks it. */
function matches(filter: Filter | null, point: PointRecord): boolean {
  return filter === null || matchesPayload(filter, { id: point.id, payload: point.payload ?? {}, vectors: new Set(Object.keys(point.vectors)) });
}

function unsupported(what: string): QuiverError {
  return new ServiceError(`the fake replica does not support ${what}`);
}

/** Waits for `released`, or fails with the timeout error once the budget, pinned to this clock on receipt, runs out. */
async function untilExpiry(released: Promise<void>, budget: DeadlineBudget): Promise<void> {
  const deadline = deadlineOf(budget);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError(deadline)), budget.remainingMs);
  });
  try {
    await Promise.race([released, expired]);
  } finally {
    clearTimeout(timer);
  }
}
