// etcd's JSON gateway (`/v3/...` on the local member's loopback client URL) for what the `etcd3`
// npm client cannot do: learners (add with `isLearner`, promote) and the member's own status
// with `isLearner`. Adding a member through `etcd3` would add a voter, and a voter that does not
// run yet counts in the quorum: a one-peer cluster joined that way stops committing.
//
// Gateway conventions (etcd 3.4): int64/uint64 travel as decimal strings, `false` and 0 fields are
// left out, errors are `{error, message, code}` with the gRPC status code, and the only reliable
// way to tell etcd's errors apart is their message. Member ids stay decimal strings here, as the
// gateway and the `etcd3` client write them: they are uint64 and do not fit a JS number.

import { request } from 'undici';
import { ServiceError } from '../errors.js';

/** A member as etcd lists it. `name` is empty until the member has started once. */
export interface EtcdMemberInfo {
  id: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

/** `maintenance/status` of the member the gateway talks to. */
export interface EtcdStatus {
  /** This member's id. */
  memberId: string;
  /** The leader's member id; '0' when there is none (an election is on). */
  leader: string;
  raftTerm: number;
  /** The last raft index committed by the cluster as this member knows it. */
  raftIndex: number;
  /** Absent before etcd 3.4. */
  raftAppliedIndex: number | null;
  /** The KV store's revision. */
  revision: number;
  isLearner: boolean;
  version: string;
}

/** An error answer of etcd: its gRPC status `code` and its `etcdMessage` as etcd words it. */
export class EtcdError extends ServiceError {
  constructor(readonly operation: string, readonly code: number, readonly etcdMessage: string) {
    super(`etcd ${operation} failed: ${etcdMessage}`);
  }
}

/** The member did not answer (refused connection, timeout, broken answer). */
export class EtcdUnreachable extends ServiceError {
  constructor(readonly operation: string, cause: string) {
    super(`etcd ${operation} failed: ${cause}`);
  }
}

function etcdErrorMatching(err: unknown, pattern: RegExp): boolean {
  return err instanceof EtcdError && pattern.test(err.etcdMessage);
}

/** etcd 3.4 holds one learner at a time: a join must wait until the current learner is promoted. */
export function isTooManyLearners(err: unknown): boolean {
  return etcdErrorMatching(err, /too many learner members/);
}

/** A learner can be promoted only once it has caught up with the leader; retry later. */
export function isLearnerNotReady(err: unknown): boolean {
  return etcdErrorMatching(err, /learner member which is in sync with leader/);
}

/** An add whose peer URL (or the id derived from it) is already a member's. */
export function isMemberExists(err: unknown): boolean {
  return etcdErrorMatching(err, /member ID already exist|Peer URLs already exists/);
}

/** A promote of a member that is already a voter (a promote that was repeated). */
export function isAlreadyVoter(err: unknown): boolean {
  return etcdErrorMatching(err, /^etcdserver: can only promote a learner member$/);
}

/** The member asked is a learner, which serves no writes, watches or linearizable reads. */
export function isLearnerRefusal(err: unknown): boolean {
  return etcdErrorMatching(err, /rpc not supported for learner/);
}

export function isMemberNotFound(err: unknown): boolean {
  return etcdErrorMatching(err, /member not found/);
}

/** A change of membership etcd refuses for now because too few members run to keep a quorum. */
export function isNotEnoughStartedMembers(err: unknown): boolean {
  return etcdErrorMatching(err, /not enough started members/);
}

/**
 * etcd's reconfiguration check refuses a member change until the leader has been connected to
 * every voter for the last 5 s: after a join or a restart, the next join waits that long.
 */
export function isUnhealthyCluster(err: unknown): boolean {
  return etcdErrorMatching(err, /unhealthy cluster/);
}

const DEFAULT_TIMEOUT_MS = 5_000;

interface RawMember {
  ID?: string;
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
  isLearner?: boolean;
}

interface RawStatus {
  header?: { member_id?: string; revision?: string };
  version?: string;
  leader?: string;
  raftIndex?: string;
  raftTerm?: string;
  raftAppliedIndex?: string;
  isLearner?: boolean;
}

function memberOf(raw: RawMember): EtcdMemberInfo {
  return { id: raw.ID ?? '0', name: raw.name ?? '', peerURLs: raw.peerURLs ?? [], clientURLs: raw.clientURLs ?? [], isLearner: raw.isLearner === true };
}

function membersOf(raw: { members?: RawMember[] }): EtcdMemberInfo[] {
  return (raw.members ?? []).map(memberOf);
}

/** A gateway number: absent means 0. Raft terms and indexes stay far below 2^53. */
function count(value: string | undefined): number {
  return value === undefined ? 0 : Number(value);
}

export class EtcdGateway {
  /**
   * @param clientUrl the member's client URL (`EtcdMember.clientUrl`)
   * @param timeoutMs bound of each call, connection and answer included
   */
  constructor(readonly clientUrl: string, private readonly timeoutMs = DEFAULT_TIMEOUT_MS) {}

  /** Adds a member (a learner when asked) and answers it and the member list after the add. */
  async memberAdd(peerURLs: string[], options: { isLearner: boolean }): Promise<{ member: EtcdMemberInfo; members: EtcdMemberInfo[] }> {
    const answer = await this.call<{ member?: RawMember; members?: RawMember[] }>('member add', '/v3/cluster/member/add', { peerURLs, isLearner: options.isLearner });
    return { member: memberOf(answer.member ?? {}), members: membersOf(answer) };
  }

  /** Makes a learner a voter; answers the member list after it. */
  async memberPromote(id: string): Promise<EtcdMemberInfo[]> {
    return membersOf(await this.call('member promote', '/v3/cluster/member/promote', { ID: id }));
  }

  async memberRemove(id: string): Promise<EtcdMemberInfo[]> {
    return membersOf(await this.call('member remove', '/v3/cluster/member/remove', { ID: id }));
  }

  async memberList(): Promise<EtcdMemberInfo[]> {
    return membersOf(await this.call('member list', '/v3/cluster/member/list', {}));
  }

  async status(): Promise<EtcdStatus> {
    const raw = await this.call<RawStatus>('status', '/v3/maintenance/status', {});
    return {
      memberId: raw.header?.member_id ?? '0',
      leader: raw.leader ?? '0',
      raftTerm: count(raw.raftTerm),
      raftIndex: count(raw.raftIndex),
      raftAppliedIndex: raw.raftAppliedIndex === undefined ? null : Number(raw.raftAppliedIndex),
      revision: count(raw.header?.revision),
      isLearner: raw.isLearner === true,
      version: raw.version ?? '',
    };
  }

  private async call<T>(operation: string, path: string, body: object): Promise<T> {
    let statusCode: number;
    let text: string;
    try {
      const answer = await request(this.clientUrl + path, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      statusCode = answer.statusCode;
      text = await answer.body.text();
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw new EtcdUnreachable(operation, timedOut ? `no answer from ${this.clientUrl} within ${this.timeoutMs} ms` : `${this.clientUrl}: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new EtcdUnreachable(operation, `${this.clientUrl} answered ${statusCode}: ${text.slice(0, 200)}`);
    }
    if (statusCode !== 200) {
      const error = parsed as { message?: string; error?: string; code?: number };
      throw new EtcdError(operation, error.code ?? 2, error.message ?? error.error ?? `HTTP ${statusCode}`);
    }
    return parsed as T;
  }
}
