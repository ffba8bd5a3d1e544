// The join handshake's messages (plan 2.3), shared by the joiner (membership.ts) and the peer it
// asks (join-handler.ts), and the rules both sides derive from them: which version may join, and
// which URI and etcd peer URL a joiner gets.

import { isIP } from 'node:net';
import { VERSION } from '../version.js';

/** What must match between peers: Quiver's version, and Node's major (peers exchange `v8.serialize` bodies). */
export interface PeerVersion {
  quiver: string;
  node: string;
}

/** What a joiner sends. */
export interface JoinBody {
  peer_id: number;
  /** The joiner's p2p URI; absent: the asked peer derives it from the request's source address. */
  uri?: string;
  p2p_port: number;
  /** The port the joiner's etcd member listens on for other members. */
  grpc_port: number;
  version: PeerVersion;
  /**
   * Present when the joiner keeps the control plane in an external etcd (`cluster.etcd.endpoints`)
   * rather than running a member: the uuid of the cluster that etcd holds (null: none), which
   * must be the asked peer's, else the two follow different control planes.
   */
  external_etcd?: { cluster: string | null };
}

/** A join as the asked peer handles it: the body plus the address the request came from. */
export interface JoinRequest extends JoinBody {
  source_ip: string;
}

/** An etcd member as the joiner's `--initial-cluster` names it. */
export interface JoinMember {
  name: string;
  peerURLs: string[];
}

export type JoinAnswer =
  /**
   * Added as a learner: start the member with these members and state `existing`. With an
   * external etcd: registered; `members` is empty and `peer_url` is '' (no member to start).
   */
  | { status: 'accepted'; members: JoinMember[]; cluster_token: string; uri: string; peer_url: string }
  /** Not now (another peer is joining, the cluster is short of members): ask again later. */
  | { status: 'retry'; reason: string; retry_after_ms: number }
  /** Never: the joiner cannot be part of this cluster as it is. */
  | { status: 'refused'; reason: string };

/** The asked peer's side of a join: one per way of keeping the control plane (join-handler.ts, external-join-handler.ts). */
export interface JoinAdmission {
  handle(request: JoinRequest): Promise<JoinAnswer>;
  /** Ends what a join left running (a learner's promotion); answers once it has. */
  stop(): Promise<void>;
}

export function localPeerVersion(): PeerVersion {
  return { quiver: VERSION, node: process.versions.node };
}

function nodeMajor(version: string): string {
  return version.split('.')[0];
}

/** Why `joiner` cannot join a cluster running `local`, or null when it can. */
export function versionMismatch(local: PeerVersion, joiner: PeerVersion): string | null {
  if (joiner.quiver !== local.quiver) return `Quiver version ${joiner.quiver} cannot join a cluster running Quiver ${local.quiver}; run the same version on every peer`;
  if (nodeMajor(joiner.node) !== nodeMajor(local.node)) {
    return `Node.js ${joiner.node} cannot join a cluster running Node.js ${local.node}: peers exchange data in Node's serialization format, which needs the same Node.js major version (${nodeMajor(local.node)}) on every peer`;
  }
  return null;
}

/**
 * Why `request` cannot join a cluster running `local` whose control plane is in an external etcd
 * when `localExternal`, or null when it can.
 */
export function joinMismatch(local: PeerVersion, localExternal: boolean, request: JoinBody): string | null {
  const version = versionMismatch(local, request.version);
  if (version !== null) return version;
  if (localExternal === (request.external_etcd !== undefined)) return null;
  return localExternal
    ? 'this cluster keeps its control plane in an external etcd: start the joining peer with the same cluster.etcd.endpoints'
    : 'this cluster\'s peers run their own etcd members: start the joining peer without cluster.etcd.endpoints';
}

/** A host as a URL writes it: IPv6 in brackets, an IPv4-mapped IPv6 address as plain IPv4. */
function urlHost(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  return isIP(ip) === 6 ? `[${ip}]` : ip;
}

/** The joiner's p2p URI: its own, or Qdrant's derivation from where its request came from. */
export function joinerUri(request: JoinRequest): string {
  return (request.uri ?? `http://${urlHost(request.source_ip)}:${request.p2p_port}`).replace(/\/+$/, '');
}

/** The etcd peer URL of a peer: its URI's host, its gRPC port. */
export function etcdPeerUrl(uri: string, grpcPort: number): string {
  return `http://${new URL(uri).hostname}:${grpcPort}`;
}
