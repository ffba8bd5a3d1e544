// A control plane on a real one-member etcd for tests: `peers` registered peers, two proposers
// (two peers' ControlPlane objects racing each other) and an observer peer's apply loop, whose
// view after a given revision is what every peer would apply.

import type { Test } from 'tap';
import { ApplyLoop } from '../../src/cluster/apply-loop.js';
import type { ClusterView } from '../../src/cluster/cluster-view.js';
import { ControlPlane } from '../../src/cluster/control-plane.js';
import { clusterNamespace } from '../../src/cluster/keys.js';
import { registerPeer } from '../../src/cluster/peer-registry.js';
import { etcdClient, startTestEtcd, testPeerInfo } from './etcd-member.js';

/** How long a test waits for the observer to apply a revision. */
export const WAIT_MS = 10_000;

export async function controlPlaneCluster(t: Test, peers: number) {
  const member = await startTestEtcd(t);
  const a = new ControlPlane(clusterNamespace(etcdClient(t, member.clientUrl)));
  const b = new ControlPlane(clusterNamespace(etcdClient(t, member.clientUrl)));
  const registrar = etcdClient(t, member.clientUrl);
  for (let id = 1; id <= peers; id++) await registerPeer(registrar, id, testPeerInfo(id));
  const loop = new ApplyLoop({ namespace: clusterNamespace(etcdClient(t, member.clientUrl)), onApply: async () => {} });
  t.teardown(() => loop.stop());
  await loop.start();
  /** The observer's view once it applied `revision`. */
  const seen = async (revision: number): Promise<ClusterView> => {
    await loop.waitApplied(revision, WAIT_MS);
    return loop.current;
  };
  return { a, b, seen, member, registrar };
}
