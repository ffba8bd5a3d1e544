// A peer's liveness in the control plane (plan 3.5): `quiver/live/<peer id>` =
// `{process_id, started_at}` attached to a lease the peer keeps alive (etcd3 renews it every
// TTL/3). If the peer stops or hangs the lease expires and etcd deletes the key: other peers
// see it gone within the TTL. A lease lost while the peer runs (etcd unreachable longer than the
// TTL, a revoke from elsewhere) is granted again and the key put again, until stop.
// The TTL is 5 s, 50 ticks at the default tick: shorter leases flap on a loaded 2-core machine.

import { setTimeout as sleep } from 'node:timers/promises';
import type { Etcd3, Lease } from 'etcd3';
import { CLUSTER_PREFIX, clusterNamespace, liveKey, LIVE_PREFIX, type LiveInfo } from './keys.js';

export interface LivenessOptions {
  ttlSec?: number;
  /** Told when the lease is lost or cannot be granted again (the next attempt follows). */
  onLost?: (reason: string) => void;
}

const TTL_SEC = 5;
const CALL_MS = 5_000;
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2_000;

function deadline(): { deadline: Date } {
  return { deadline: new Date(Date.now() + CALL_MS) };
}

export class Liveness {
  private lease: Lease | null = null;
  private renewing: Promise<void> = Promise.resolve();
  private readonly stopping = new AbortController();
  private readonly ttlSec: number;

  private constructor(private readonly etcd: Etcd3, private readonly key: string, private readonly value: string, private readonly options: LivenessOptions) {
    this.ttlSec = options.ttlSec ?? TTL_SEC;
  }

  /** Grants the lease and puts the live key; answers once the key is written (or throws). */
  static async start(etcd: Etcd3, peerId: number, record: LiveInfo, options: LivenessOptions = {}): Promise<Liveness> {
    // The lease puts the key through the plain client: the full key, prefix included.
    const liveness = new Liveness(etcd, CLUSTER_PREFIX + liveKey(peerId), JSON.stringify(record), options);
    liveness.watchLoss(await liveness.attach());
    return liveness;
  }

  /** The current lease's id (decimal), null while it is being granted again. */
  async leaseId(): Promise<string | null> {
    return this.lease === null ? null : this.lease.grant();
  }

  /** Revokes the lease: the live key goes at once. Bounded; a revoke etcd does not answer is left to expire. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.renewing;
    const lease = this.lease;
    this.lease = null;
    if (lease === null) return;
    try {
      await lease.revoke(deadline());
    } catch {
      // etcd unreachable: the key expires with the lease's TTL anyway.
      lease.release();
    }
  }

  private async attach(): Promise<Lease> {
    const lease = this.etcd.lease(this.ttlSec, deadline());
    try {
      await lease.put(this.key).value(this.value).options(deadline());
    } catch (err) {
      lease.release();
      throw err;
    }
    this.lease = lease;
    return lease;
  }

  private watchLoss(lease: Lease): void {
    lease.once('lost', (err: Error) => {
      if (this.lease !== lease || this.stopping.signal.aborted) return;
      this.lease = null;
      this.options.onLost?.(`the liveness lease was lost: ${err.message}`);
      this.renewing = this.renew();
    });
  }

  private async renew(): Promise<void> {
    let backoff = FIRST_BACKOFF_MS;
    while (!this.stopping.signal.aborted) {
      try {
        const lease = await this.attach();
        if (this.stopping.signal.aborted) return; // stop() revokes it
        this.watchLoss(lease);
        return;
      } catch (err) {
        this.options.onLost?.(`the liveness lease could not be granted again: ${(err as Error).message}`);
      }
      await sleep(backoff, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

/** The peers whose live key exists, by peer id. */
export async function livePeers(etcd: Etcd3): Promise<Map<number, LiveInfo>> {
  const stored = await clusterNamespace(etcd).getAll().prefix(LIVE_PREFIX).options(deadline()).strings();
  const live = new Map<number, LiveInfo>();
  for (const [key, value] of Object.entries(stored)) live.set(Number(key.slice(LIVE_PREFIX.length)), JSON.parse(value) as LiveInfo);
  return live;
}
