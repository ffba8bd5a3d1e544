// The asked peer's side of a join when the control plane is in an external etcd
// (`cluster.etcd.endpoints`): there is no etcd member to add, so joining is being registered.
// The asked peer still answers the join, as with peers' own members, because the joiner's URI may
// be Qdrant's derivation from the address the join came from, and the versions must match. The
// joiner says which cluster its etcd holds: a joiner given other endpoints is refused before it
// is registered, else it would be listed in this cluster while following another control plane.
// A registered peer with another id at the joiner's URI refuses the join: two peers would answer
// for one address. A record of the same peer id is replaced (a peer that joins again).

import type { Etcd3 } from 'etcd3';
import { joinerUri, joinMismatch, type JoinAdmission, type JoinAnswer, type JoinRequest, type PeerVersion } from './join-protocol.js';
import { listPeers, registerPeer } from './peer-registry.js';

export interface ExternalJoinHandlerOptions {
  /** A client of the external etcd. */
  etcd: Etcd3;
  clusterToken: string;
  version: PeerVersion;
}

export class ExternalJoinHandler implements JoinAdmission {
  constructor(private readonly options: ExternalJoinHandlerOptions) {}

  async handle(request: JoinRequest): Promise<JoinAnswer> {
    const mismatch = joinMismatch(this.options.version, true, request);
    if (mismatch) return { status: 'refused', reason: mismatch };
    const cluster = request.external_etcd!.cluster;
    if (cluster !== this.options.clusterToken) {
      return { status: 'refused', reason: `the joining peer's etcd holds ${cluster === null ? 'no cluster' : `cluster ${cluster}`}, this peer's holds cluster ${this.options.clusterToken}: give every peer the same cluster.etcd.endpoints` };
    }
    const uri = joinerUri(request);
    const printed = new URL(uri).href;
    for (const [peerId, record] of await listPeers(this.options.etcd)) {
      if (peerId !== request.peer_id && new URL(record.uri).href === printed) {
        return { status: 'refused', reason: `URI ${uri} belongs to peer ${peerId}; peer ${request.peer_id} needs its own address` };
      }
    }
    // No etcd member: the record's member fields stay empty (no peer leads etcd, none is removed from it).
    await registerPeer(this.options.etcd, request.peer_id, { uri, etcd_member_id: '', etcd_peer_url: '', version: request.version.quiver });
    return { status: 'accepted', members: [], cluster_token: this.options.clusterToken, uri, peer_url: '' };
  }

  /** Nothing outlives a join here. */
  async stop(): Promise<void> {}
}
