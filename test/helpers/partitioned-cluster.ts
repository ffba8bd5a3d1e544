// CLI-started cluster peers whose network links can be cut, for partition tests: a loopback
// proxy (tcp-proxy.ts) in front of each peer's p2p port and of its etcd member's peer port, every
// peer reaching every other one through them, so one peer can be cut off from the others both
// ways while the test (outside the partition) still reaches every peer's REST port.
//
// A peer advertises its proxies and listens behind them: its p2p URI (`--uri`) names its p2p
// proxy while it listens on `cluster.p2p.port`, as Qdrant allows, and its etcd member is
// registered at its etcd proxy (`cluster.etcd.advertise_port`) while it listens on
// `service.grpc_port`. Each peer enters the cluster that way, so no link between two peers ever
// bypasses the proxies; the start checks it.
//
// A proxy tells a connection's sender by what the HTTP request says of it (Quiver's p2p
// `x-quiver-peer`, etcd's `X-PeerURLs`, the sender's advertised URL) or, for etcd's requests that
// say nothing (a follower forwarding a lease keepalive to the leader, probes), by the process at
// the other end.

import { rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { Test } from 'tap';
import { etcdMemberPid, peerPorts, startCluster, until, type ClusterPeer, type PeerPorts } from './cluster.js';
import { formed } from './cluster-api.js';
import { connectingProcess, httpHeader, processesConnectedTo, TcpProxy } from './tcp-proxy.js';

export interface PartitionedCluster {
  /** The peers, in start order. */
  peers: ClusterPeer[];
  /** Each peer's id, in the same order. */
  ids: number[];
  /** Cuts the peer at `index` off from every other peer, both ways, p2p and etcd. */
  isolate(index: number): Promise<void>;
  /** Heals every link; what was sent during the cut and still waits is delivered late (`forward`) or never (`reset`). */
  heal(held?: 'forward' | 'reset'): void;
  /** Connections the cuts reset, and new ones they held, over every proxy. */
  cuts(): { reset: number; held: number };
}

/**
 * Starts `count` peers behind proxies (see above), formed. The peers and proxies stop, and the
 * storage folders are removed, at the test's end.
 */
export async function startPartitionedCluster(t: Test, count: number, env: Record<string, string>): Promise<PartitionedCluster> {
  const storages: string[] = [];
  // Registered first, so it runs once the peers (stopped by later teardowns) are gone.
  t.teardown(async () => {
    await Promise.all(storages.map((storage) => rm(storage, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })));
  });

  // Filled once the peers run: until then a sender is not told apart (nothing is cut meanwhile).
  const ids: number[] = [];
  const peerOfPid = new Map<number, string>();
  const byProcess = async (client: Socket) => {
    const pid = await connectingProcess(client, [...peerOfPid.keys()]);
    return pid === null ? null : peerOfPid.get(pid) ?? null;
  };
  const p2p = await Promise.all(Array.from({ length: count }, () => TcpProxy.start({
    senderOf: (head, client) => httpHeader(head, 'x-quiver-peer') ?? byProcess(client),
  })));
  const etcd: TcpProxy[] = await Promise.all(Array.from({ length: count }, () => TcpProxy.start({
    senderOf: (head, client) => {
      const from = (httpHeader(head, 'x-peerurls') ?? '').split(',').map((url) => etcd.findIndex((proxy) => proxy.url === url)).find((i) => i >= 0);
      return from !== undefined && ids[from] !== undefined ? String(ids[from]) : byProcess(client);
    },
  })));
  t.teardown(() => Promise.all([...p2p, ...etcd].map((proxy) => proxy.close())));
  // Drawn while the proxies hold their ports, so that none of these is one of them.
  const ports: PeerPorts[] = [];
  for (let i = 0; i < count; i++) {
    ports.push(await peerPorts());
    p2p[i].forwardTo(ports[i].p2p);
    etcd[i].forwardTo(ports[i].grpc);
  }

  const peers = await startCluster(t, count, { env }, (i) => ({
    ports: ports[i],
    uri: p2p[i].url,
    env: { QDRANT__CLUSTER__ETCD__ADVERTISE_PORT: String(etcd[i].port) },
  }));
  storages.push(...peers.map((p) => p.storage));
  ids.push(...(await formed(peers)).ids);
  const pidsOf = await Promise.all(peers.map(async (peer) => [peer.server.process.pid!, await etcdMemberPid(peer)]));
  for (const [i, pids] of pidsOf.entries()) for (const pid of pids) peerOfPid.set(pid, String(ids[i]));

  // Each proxy carries raft traffic from each other peer, and no peer's process holds a
  // connection to another peer's own ports: a link that bypassed the proxies would survive a cut.
  await until('etcd traffic between every two peers through their proxies', async () =>
    etcd.every((proxy, i) => ids.every((id, j) => i === j || proxy.seen.has(String(id)))), 30_000);
  for (const [i, { p2p: p2pPort, grpc }] of ports.entries()) {
    const others = pidsOf.filter((_, j) => j !== i).flat();
    for (const port of [p2pPort, grpc]) {
      const direct = await processesConnectedTo(port, others);
      if (direct.length > 0) throw new Error(`processes ${direct.join(', ')} of other peers hold connections to port ${port} of peer ${ids[i]}, past its proxy`);
    }
  }

  return {
    peers,
    ids,
    async isolate(index) {
      const isolated = String(ids[index]);
      await Promise.all([...p2p, ...etcd].map((proxy) => proxy.identify()));
      // Every link at once: a peer that lost its p2p links but not yet its etcd ones could still
      // have replicas marked Dead, which no partition does.
      for (let i = 0; i < count; i++) {
        for (const proxy of [p2p[i], etcd[i]]) proxy.cut(i === index ? () => true : (sender) => sender === isolated);
      }
    },
    heal(held) {
      for (const proxy of [...p2p, ...etcd]) proxy.heal(held);
    },
    cuts() {
      return [...p2p, ...etcd].reduce((sum, proxy) => ({ reset: sum.reset + proxy.cuts.reset, held: sum.held + proxy.cuts.held }), { reset: 0, held: 0 });
    },
  };
}
