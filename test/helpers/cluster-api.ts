// What the cluster tests ask of a peer's REST API: a result that must be 200, the cluster formed
// (every peer listing every peer, one leader agreed), and where a collection's replicas are.

import { call } from './api-http.js';
import { until, type ClusterPeer } from './cluster.js';

type Envelope<T> = { result: T; status: unknown };

/** The envelope's result of a request that must answer 200 (else throws with the answer). */
export async function result<T>(peer: ClusterPeer, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call(peer.url, method, path, body);
  if (answer.status !== 200) throw new Error(`${method} ${path} through ${peer.url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body as Envelope<T>).result;
}

interface ClusterBody {
  peer_id: number;
  peers: Record<string, unknown>;
  raft_info: { leader: number | null };
}

/**
 * Waits (bounded) until every peer lists all of `peers` and they agree on one leader; answers
 * each peer's id, in the peers' order, and the leader's.
 */
export async function formed(peers: readonly ClusterPeer[], ms = 60_000): Promise<{ ids: number[]; leader: number }> {
  const bodies = await until(`${peers.length} peers with one leader`, async () => {
    const all = await Promise.all(peers.map((p) => result<ClusterBody>(p, 'GET', '/cluster')));
    const leaders = new Set(all.map((b) => b.raft_info.leader));
    return all.every((b) => Object.keys(b.peers).length === peers.length && b.raft_info.leader !== null) && leaders.size === 1 && all;
  }, ms);
  return { ids: bodies.map((b) => b.peer_id), leader: bodies[0].raft_info.leader! };
}

export interface ShardTransferInfo {
  shard_id: number;
  to_shard_id?: number;
  from: number;
  to: number;
  sync: boolean;
  method: string;
  comment?: string;
}

export interface CollectionClusterInfo {
  peer_id: number;
  local_shards: { shard_id: number; state: string; points_count: number }[];
  remote_shards: { shard_id: number; peer_id: number; state: string }[];
  shard_transfers: ShardTransferInfo[];
}

/** Every replica's state as `peer` sees the collection, keyed `<shard>@<peer id>` in key order, and the transfers under way. */
export async function replicaStates(peer: ClusterPeer, collection: string): Promise<{ states: Map<string, string>; transfers: ShardTransferInfo[] }> {
  const info = await result<CollectionClusterInfo>(peer, 'GET', `/collections/${collection}/cluster`);
  const entries: [string, string][] = [
    ...info.local_shards.map((s): [string, string] => [`${s.shard_id}@${info.peer_id}`, s.state]),
    ...info.remote_shards.map((s): [string, string] => [`${s.shard_id}@${s.peer_id}`, s.state]),
  ];
  return { states: new Map(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))), transfers: info.shard_transfers };
}

/**
 * Whether every peer sees every replica of the collection Active and no transfer under way;
 * when not, `lastSeen` (if given) keeps what each peer saw, for the message of a wait that timed out.
 */
export async function allActive(peers: readonly ClusterPeer[], collection: string, lastSeen?: { text: string }): Promise<boolean> {
  const seen = await Promise.all(peers.map((p) => replicaStates(p, collection)));
  const active = seen.every(({ states, transfers }) => transfers.length === 0 && states.size > 0 && [...states.values()].every((s) => s === 'Active'));
  if (!active && lastSeen) lastSeen.text = seen.map(({ states, transfers }, i) => `${peers[i].url}: ${JSON.stringify([...states])} transfers ${JSON.stringify(transfers)}`).join('\n');
  return active;
}

/**
 * Waits (bounded) until every peer sees every replica of the collection Active and no transfer
 * under way; on a timeout the error tells what each peer saw last and the peers' last log lines
 * on transfers and recovery.
 */
export async function untilAllActive(peers: readonly ClusterPeer[], collection: string, ms: number): Promise<void> {
  const lastSeen = { text: '' };
  try {
    await until(`every replica of ${collection} Active, no transfer left`, () => allActive(peers, collection, lastSeen), ms);
  } catch (err) {
    const lines = peers.map((p) => lastLogLines(p, 15, /transfer|recover|Dead|abort/i).join('\n')).join('\n---\n');
    throw new Error(`${(err as Error).message}\nlast seen:\n${lastSeen.text}\npeers' log lines on transfers:\n${lines}`);
  }
}

/**
 * A peer's last `count` log entries (those matching `only`, if given), one line each: a JSON log
 * line as its level, message and error message, any other line (a crash's stack) as it is;
 * repeats folded into one.
 */
export function lastLogLines(peer: ClusterPeer, count = 15, only?: RegExp): string[] {
  const lines: string[] = [];
  for (const raw of peer.server.output().split('\n')) {
    const text = raw.trim();
    if (text === '') continue;
    let line = text;
    try {
      const entry = JSON.parse(text) as { level?: number; msg?: string; err?: { message?: string } };
      line = `[${entry.level}] ${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`;
    } catch {
      // not a log entry: kept as it is
    }
    if (only && !only.test(line)) continue;
    const previous = lines.at(-1);
    const repeated = previous === undefined ? null : /^(.*?)(?: \(×(\d+)\))?$/s.exec(previous);
    if (repeated && repeated[1] === line) lines[lines.length - 1] = `${line} (×${Number(repeated[2] ?? 1) + 1})`;
    else lines.push(line);
  }
  return lines.slice(-count);
}

/**
 * What each peer says of the cluster and of `collections`, whether it still runs, and its last
 * log lines (`lines` of them, those matching `only` if given): the evidence of a failed wait.
 */
export async function describePeers(peers: readonly ClusterPeer[], collections: readonly string[], lines = 15, only?: RegExp): Promise<string> {
  const parts = await Promise.all(peers.map(async (peer) => {
    const { exitCode, signalCode } = peer.server.process;
    const ended = exitCode !== null || signalCode !== null ? ` EXITED (${exitCode ?? signalCode})` : '';
    const raft = await result<{ peer_id: number; raft_info: unknown }>(peer, 'GET', '/cluster').then(
      (body) => `peer ${body.peer_id} raft ${JSON.stringify(body.raft_info)}`, (err: Error) => err.message);
    const states = await Promise.all(collections.map((name) => replicaStates(peer, name).then(
      ({ states, transfers }) => `${name}: ${JSON.stringify([...states])} transfers ${JSON.stringify(transfers)}`,
      (err: Error) => `${name}: ${err.message}`)));
    return [`${peer.url}${ended} ${raft}`, ...states, 'last log lines:', ...lastLogLines(peer, lines, only)].join('\n');
  }));
  return parts.join('\n---\n');
}

/** Resolves with the first of `peers` whose process ends. */
export function firstExit(peers: readonly ClusterPeer[]): Promise<ClusterPeer> {
  return Promise.race(peers.map((peer) => {
    const { process } = peer.server;
    if (process.exitCode !== null || process.signalCode !== null) return Promise.resolve(peer);
    return new Promise<ClusterPeer>((resolve) => process.once('exit', () => resolve(peer)));
  }));
}
