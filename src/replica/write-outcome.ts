// Which replicas take an update, whether it stands once they answered, and which of them are
// then Dead (Qdrant's `update_impl` and `handle_failed_replicas`,
// lib/collection/src/shards/replica_set/update.rs), as pure rules over the replicas' answers.

import { ServiceError } from '../errors.js';
import { FED_BY_TRANSFER, RECEIVING, SOURCE_OF_TRUTH, UPDATABLE, type ReplicaState } from './replica.js';
import { errorText, isMissingPoint, isTransient } from './replica-errors.js';
import type { MarkDecision } from './replica-states.js';

/** How long a `wait=true` update waits for failed replicas to show as no longer Active (Qdrant's `DEFAULT_SHARD_DEACTIVATION_TIMEOUT`). */
export const DEACTIVATION_TIMEOUT_MS = 30_000;

/**
 * Whether a replica in `state` takes updates directly from a replica set: Active, Initializing
 * and Listener ones (and the resharding states); a Partial one through its transfer's source only
 * (FED_BY_TRANSFER); Recovery and PartialSnapshot only with a forced clock tag, which no update
 * of this path carries; Dead never. A replica this peer disabled after a failure takes none
 * until its new state is applied.
 */
export function takesUpdates(state: ReplicaState | undefined, disabled: boolean): boolean {
  return state !== undefined && UPDATABLE.has(state) && !FED_BY_TRANSFER.has(state) && !disabled;
}

/**
 * Whether a replica in `state` applies a `wait=true` update without waiting for it: a Listener
 * only acknowledges once the update is in its log (it serves no reads, so nobody waits on it).
 */
export function appliesWithoutWait(state: ReplicaState): boolean {
  return state === 'Listener';
}

/** The answers an update needs: `write_consistency_factor`, at most the replicas of the set (in any state, as Qdrant counts them). */
export function requiredSuccesses(writeConsistencyFactor: number, replicaCount: number): number {
  return Math.min(writeConsistencyFactor, replicaCount);
}

/** What one replica that took the update answered. */
export type TargetOutcome =
  | { peer: number; state: ReplicaState; ok: true; /** Applied (not only logged): a `wait=true` update on a replica that is no Listener. */ completed: boolean }
  | { peer: number; state: ReplicaState; ok: false; error: unknown };

type Failure = Extract<TargetOutcome, { ok: false }>;

/** A replica to mark Dead, and the state it fails from (null when it is receiving a transfer, whose state changes quickly). */
export interface Deactivation {
  peer: number;
  from: ReplicaState | null;
}

export interface UpdateVerdict {
  /** Whether it stands by count: no replica failed it, or `successes >= min(wcf, replicas)`. */
  accepted: boolean;
  /** Replicas that failed it and are now to be marked Dead. */
  deactivate: Deactivation[];
  /**
   * Whether a `wait=true` update must wait until they show as no longer Active before answering:
   * a replica that failed transiently may come back and serve reads without the update meanwhile.
   */
  waitForDeactivation: boolean;
  /** The first failure, which Qdrant's consistency errors name. */
  firstFailure: Failure | null;
  /** The error that answers the update, if it does not stand. */
  error: unknown;
  /** The peer whose answer is the update's (the highest that applied it, so the answer does not depend on timing). */
  answerFrom: number | null;
}

/**
 * Judges an update from its targets' outcomes (in the order the targets were asked), given the
 * number of replicas in the set and `write_consistency_factor`:
 * - a failure, and fewer successes than required: the first failure's own error answers, nothing is rolled
 *   back, and only failed resharding replicas are marked Dead;
 * - enough: every failed replica is marked Dead (only those failing transiently when no replica
 *   completed the update: a refusal every replica would give is no sign of divergence);
 * - none of the successes on a replica that can be the source of truth: Qdrant's consistency error.
 */
export function judgeUpdate(outcomes: readonly TargetOutcome[], replicaCount: number, writeConsistencyFactor: number): UpdateVerdict {
  const successes = outcomes.filter((o) => o.ok);
  const failures = outcomes.filter((o): o is Failure => !o.ok);
  const firstFailure = failures[0] ?? null;
  // Without a failure the update stands even below the factor (fewer replicas take updates than
  // the set holds, e.g. one is Dead): Qdrant only counts successes once a replica failed.
  const accepted = failures.length === 0 || successes.length >= requiredSuccesses(writeConsistencyFactor, replicaCount);
  const verdict: UpdateVerdict = { accepted, deactivate: [], waitForDeactivation: false, firstFailure, error: null, answerFrom: null };
  if (!accepted) {
    verdict.deactivate = deactivations(failures.filter((f) => f.state === 'Resharding' || f.state === 'ReshardingScaleDown')).deactivate;
    verdict.error = firstFailure?.error ?? null;
    return verdict;
  }
  const completed = successes.some((s) => s.completed);
  const handled = deactivations(completed ? failures : failures.filter((f) => isTransient(f.error)));
  verdict.deactivate = handled.deactivate;
  verdict.waitForDeactivation = handled.wait;
  if (!successes.some((s) => SOURCE_OF_TRUTH.has(s.state))) verdict.error = notAppliedToActive(firstFailure);
  else verdict.answerFrom = Math.max(...successes.map((s) => s.peer));
  return verdict;
}

/**
 * The failed replicas to mark Dead, and whether to wait for it: Dead and Listener replicas'
 * failures are ignored (a Listener serves no reads), as is a missing point on a replica still
 * receiving the shard (the transfer brings it).
 */
function deactivations(failures: readonly Failure[]): { deactivate: Deactivation[]; wait: boolean } {
  const deactivate: Deactivation[] = [];
  let wait = false;
  for (const f of failures) {
    if (f.state === 'Dead' || f.state === 'Listener' || f.state === 'ManualRecovery') continue;
    if (RECEIVING.has(f.state) && isMissingPoint(f.error)) continue;
    if (isTransient(f.error) || f.state === 'Initializing') wait = true;
    deactivate.push(deactivation(f.peer, f.state));
  }
  return { deactivate, wait };
}

/** A failed replica to mark Dead from its current state; from any state while it receives a transfer (those change quickly). */
export function deactivation(peer: number, state: ReplicaState | undefined): Deactivation {
  return { peer, from: state === undefined || RECEIVING.has(state) ? null : state };
}

/** Qdrant's 500 when no replica of the set takes updates. */
export function noUpdatableReplica(shard: number, peer: number): ServiceError {
  return new ServiceError(`The replica set for shard ${shard} on peer ${peer} has no active replica`);
}

function failedPeer(failure: Failure | null): string {
  return failure ? `Failed peer: ${failure.peer}, error: ${errorText(failure.error)}` : '';
}

/** Qdrant's 500 when the update applied somewhere, but on no replica that can be the source of truth. */
export function notAppliedToActive(failure: Failure | null): ServiceError {
  return new ServiceError(`Failed to apply operation to at least one \`Active\` replica. Consistency of this update is not guaranteed. Please retry. ${failedPeer(failure)}`);
}

/**
 * Whether the shard's states stayed as they were at revision `seen` (the view an update was sent
 * by), but for the Dead marks it waited for (`decisions`): each mark read the shard's states last
 * changed at or before `seen`, or by one of those marks. Any other change in between (a replica
 * marked Dead elsewhere, a recovery) may have taken the update from the replica that applied it.
 * Null decisions are a single node's, whose states nobody else changes.
 */
export function statesKeptSince(seen: number, decisions: readonly (MarkDecision | null)[]): boolean {
  const own = new Set(decisions.flatMap((d) => (d?.committed == null ? [] : [d.committed])));
  return decisions.every((d) => d === null || d.read <= seen || own.has(d.read));
}

/** Quiver's 500 when the shard's states changed otherwise than by the update's own Dead marks while it was applied. */
export function statesChangedMeanwhile(shard: number, peer: number): ServiceError {
  return new ServiceError(`The replica states of shard ${shard} changed while the operation was applied on peer ${peer}. Consistency of this update is not guaranteed. Please retry.`);
}

/** A duration as Rust's `Duration` debug-prints it in Qdrant's messages ("30s", "500ms"). */
function durationText(ms: number): string {
  return ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`;
}

/** Qdrant's 500 when failed replicas did not show as deactivated within the timeout. */
/**
 * An update whose one source of truth that applied it is no longer one once the replicas that
 * missed it show Dead (this peer's view was behind: another peer had marked it meanwhile).
 */
export function noLongerActive(shard: number, peer: number, state: ReplicaState | undefined): ServiceError {
  return new ServiceError(`The replica of shard ${shard} on peer ${peer} that applied the operation is ${state ?? 'gone'} now. Consistency of this update is not guaranteed. Please retry.`);
}

export function deactivationTimedOut(shard: number, timeoutMs: number, failure: Failure | null): ServiceError {
  return new ServiceError(
    `Some replica of shard ${shard} failed to apply operation and deactivation timed out after ${durationText(timeoutMs)}. Consistency of this update is not guaranteed. Please retry. ${failedPeer(failure)}`,
  );
}
