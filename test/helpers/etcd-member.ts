// A one-member etcd for tests of the control plane: free loopback ports, a fresh data folder,
// stopped by the test's teardown.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { EtcdMember } from '../../src/cluster/etcd-process.js';
import { freePort } from './server.js';

export async function startTestEtcd(t: Test, name = '1'): Promise<EtcdMember> {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
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
