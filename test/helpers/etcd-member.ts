// A one-member etcd for tests of the control plane: free loopback ports, a fresh data folder,
// stopped by the test's teardown.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { Etcd3 } from 'etcd3';
import { EtcdMember } from '../../src/cluster/etcd-process.js';
import type { PeerInfo } from '../../src/cluster/keys.js';
import { freePorts } from './server.js';

export async function startTestEtcd(t: Test, name = '1'): Promise<EtcdMember> {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-etcd-'));
  const [clientPort, peerPort] = await freePorts(2);
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const member = await EtcdMember.start({
    name,
    dataDir: join(dir, 'etcd'),
    advertisePeerUrl: peerUrl,
    listenPeerUrl: peerUrl,
    clientPort,
    initialCluster: `${name}=${peerUrl}`,
    initialClusterState: 'new',
    clusterToken: `quiver-test-${clientPort}`,
    tickMs: 100,
  });
  t.teardown(async () => {
    await member.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return member;
}

/** A client of `url`, closed by the test's teardown. */
export function etcdClient(t: Test, url: string): Etcd3 {
  const client = new Etcd3({ hosts: url });
  t.teardown(() => client.close());
  return client;
}

/** A registered peer's record for peer `id` (made-up addresses: nothing is reached at them). */
export function testPeerInfo(id: number): PeerInfo {
  return { uri: `http://127.0.0.1:${6000 + id}/`, etcd_member_id: String(1000 + id), etcd_peer_url: `http://127.0.0.1:${7000 + id}`, version: '0.1.0' };
}
