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
  /** Added as a learner: start the member with these members and state `existing`. */
  | { status: 'accepted'; members: JoinMember[]; cluster_token: string; uri: string; peer_url: string }
  /** Not now (another peer is joining, the cluster is short of members): ask again later. */
  | { status: 'retry'; reason: string; retry_after_ms: number }
  /** Never: the joiner cannot be part of this cluster as it is. */
  | { status: 'refused'; reason: string };

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
