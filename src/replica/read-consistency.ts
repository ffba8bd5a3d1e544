// How many replicas of a shard must answer a read, which are asked and in what order, and when
// the read fails (Qdrant's `execute_and_resolve_read_operation` and
// `execute_cluster_read_operation`, lib/collection/src/shards/replica_set/execute_read_operation.rs).
// What the answers resolve to is read-resolution.ts.

import { ServiceError } from '../errors.js';
import type { ReadConsistency } from './request-scope.js';
import { READABLE, type ReplicaState } from './replica.js';
import { errorText, isTransient } from './replica-errors.js';

/** How the answers of several replicas combine (read-resolution.ts): kept by all of them, or by a majority. */
export type ResolveCondition = 'All' | 'Majority';

export interface ReadRequirement {
  /** Answers needed before the read resolves. */
  required: number;
  condition: ResolveCondition;
}

/** A replica as the read policy sees it. */
export interface ReplicaStanding {
  state: ReplicaState | undefined;
  /** Disabled by this peer after a failed update, until its new state is applied. */
  disabled: boolean;
}

/** Whether a replica answers reads: it holds all of the shard's data, and this peer has not disabled it. */
export function answersReads({ state, disabled }: ReplicaStanding): boolean {
  return state !== undefined && READABLE.has(state) && !disabled;
}

/**
 * The replicas counted by a consistency: `total` = every replica of the set, in any state (so
 * `all` fails while one is Dead, as Qdrant's code counts; its docs say readable ones), and
 * `readable` = those that answer reads.
 */
export function countReplicas(standings: readonly ReplicaStanding[]): { total: number; readable: number } {
  return { total: standings.length, readable: standings.filter(answersReads).length };
}

/**
 * The answers a read needs: `all` = every replica, each item kept by all; `majority` = every
 * replica, each item kept by most; `quorum` = a majority of replicas, each item kept by all of
 * those; a number N = N replicas (at least 1, at most all), each item kept by all of them.
 */
export function readRequirement(consistency: ReadConsistency, total: number): ReadRequirement {
  switch (consistency) {
    case 'all':
      return { required: total, condition: 'All' };
    case 'majority':
      return { required: total, condition: 'Majority' };
    case 'quorum':
      return { required: Math.floor(total / 2) + 1, condition: 'All' };
    default:
      // Qdrant clamps to [1, total]; a set always holds a replica, and one of none fails below.
      return { required: Math.max(1, Math.min(consistency, total)), condition: 'All' };
  }
}

/** Qdrant's 500 when fewer replicas answer reads than the consistency needs. */
export function notEnoughReplicas(shard: number, peer: number): ServiceError {
  return new ServiceError(`The replica set for shard ${shard} on peer ${peer} does not have enough active replicas`);
}

/**
 * The order replicas are asked in: this peer's own first (no network between), then the others
 * shuffled, so reads spread over them. `random` is Math.random's contract (tests fix it).
 */
export function readOrder<R>(local: R | null, remotes: readonly R[], random: () => number): R[] {
  const shuffled = [...remotes];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  return local === null ? shuffled : [local, ...shuffled];
}

/**
 * Replicas asked beyond those needed from the start: the collection's `read_fan_out_factor`, or
 * by default none when this peer's own replica answers and has no update under way (it is
 * quick), else one (the first answer may be slow).
 */
export function fanOut(readFanOutFactor: number | null, localAnswers: boolean, localBusy: boolean): number {
  return readFanOutFactor ?? (localAnswers && !localBusy ? 0 : 1);
}

/** Qdrant's 500 when too few replicas answered: one line per transient error. */
export class ReadsFailed extends ServiceError {
  constructor(readonly errors: readonly unknown[], answered: number) {
    const lines = errors.map((e) => `\n  ${errorText(e)}`).join('');
    super(`${errors.length} of ${answered + errors.length} read operations failed${errors.length ? ':' : ''}${lines}`);
  }
}

/**
 * Asks replicas in `order` until `required` answered: `required + fanOut` at once, and the next
 * one each time one fails transiently. A non-transient error (a refusal any replica would give)
 * is the answer at once; once too few are left to answer, the read fails with ReadsFailed.
 * Answers come in the order they arrived; replicas still running when it resolves are left to
 * finish, their outcome dropped.
 */
export function gatherAnswers<R, A>(order: readonly R[], required: number, extra: number, ask: (replica: R) => Promise<A>): Promise<A[]> {
  return new Promise<A[]>((resolve, reject) => {
    const answers: A[] = [];
    const errors: unknown[] = [];
    let next = 0;
    let pending = 0;
    let settled = false;
    const finish = (outcome: () => void): void => {
      settled = true;
      outcome();
    };
    const check = (): void => {
      if (answers.length >= required) finish(() => resolve(answers));
      else if (answers.length + pending < required) finish(() => reject(new ReadsFailed(errors, answers.length)));
    };
    const launch = (): void => {
      const replica = order[next++];
      pending++;
      Promise.resolve()
        .then(() => ask(replica))
        .then(
          (answer) => {
            pending--;
            if (settled) return;
            answers.push(answer);
            check();
          },
          (error: unknown) => {
            pending--;
            if (settled) return;
            if (!isTransient(error)) return finish(() => reject(error));
            errors.push(error);
            if (next < order.length) launch();
            check();
          },
        );
    };
    while (next < order.length && next < required + extra) launch();
    check();
  });
}
