// Automatic recovery, the receiver's side (Qdrant's: a peer with a Dead replica starts, by itself,
// a synchronisation transfer from a healthy Active one). On each view this peer applies, and on
// a periodic check so that an attempt that failed or was refused is made again, for every
// replica of this peer in state Dead whose shard has an Active replica on a live peer, it
// proposes a transfer (`wal_delta` unless `storage.shard_transfer_method` says otherwise) to itself from the live Active replica with the highest
// peer id (the one medium ordering leads writes from, so the source most often already holds the
// newest updates). Only the receiver proposes, and the start is a compare-and-swap, so a
// duplicate attempt (the periodic check racing a view) changes nothing. It also aborts a
// transfer into this peer whose source is no longer live or no longer Active: nothing feeds the
// receiver any more.

import type { ClusterView } from './cluster-view.js';
import type { ControlPlane, TransferLimits } from './control-plane.js';
import type { PeerId } from './keys.js';
import type { TransferMethod } from '../replica/transfer-method.js';

export type RecoveryProposer = Pick<ControlPlane, 'startTransfer' | 'abortTransfer'>;

export interface RecoveryOptions {
  peer: PeerId;
  controlPlane: RecoveryProposer;
  /** The view this peer applied last. */
  view: () => ClusterView;
  /** Whether this peer holds collection `name` open (a replica is only fed once its shard is open here). */
  holds: (collection: string) => boolean;
  limits: TransferLimits;
  /** The method of the transfers it starts. */
  method: TransferMethod;
  /** Time between two periodic checks (default 2 s). */
  intervalMs?: number;
  log: { warn(message: string): void };
}

const INTERVAL_MS = 2_000;

export class Recovery {
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly options: RecoveryOptions) {}

  /** Starts the periodic check (the first one at once). */
  start(): void {
    this.timer = setInterval(() => this.check(), this.options.intervalMs ?? INTERVAL_MS);
    this.timer.unref();
    this.check();
  }

  /** Checks again (a view was applied); a check under way is followed by one more. */
  check(): void {
    if (this.stopped) return;
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = this.run().finally(() => {
      this.checking = null;
      if (this.again) {
        this.again = false;
        this.check();
      }
    });
  }

  /** Stops the checks; answers once the one under way ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.checking;
  }

  private async run(): Promise<void> {
    const { peer, controlPlane } = this.options;
    const view = this.options.view();
    for (const transfer of view.transfers) {
      if (transfer.to !== peer) continue;
      const sourceState = view.replicas(transfer.collection, transfer.shard)?.get(transfer.from);
      if (view.live.has(transfer.from) && sourceState === 'Active') continue;
      await this.attempt(`aborting the transfer of ${transfer.collection}:${transfer.shard} from peer ${transfer.from}`, () =>
        controlPlane.abortTransfer(transfer, transfer.createRevision));
    }
    for (const [collection, shards] of view.shards) {
      if (!this.options.holds(collection)) continue;
      for (const [shard, entry] of shards) {
        if (entry.replicas[String(peer)] !== 'Dead' || view.transferTo(collection, shard, peer)) continue;
        const sources = Object.entries(entry.replicas)
          .filter(([p, state]) => state === 'Active' && Number(p) !== peer && view.live.has(Number(p)))
          .map(([p]) => Number(p));
        if (sources.length === 0) continue;
        const from = Math.max(...sources);
        const ref = { collection, shard, from, to: peer };
        // A refusal (a limit reached, the states changed meanwhile) is no failure: the next check tries again.
        await this.attempt(`starting the recovery of ${collection}:${shard} from peer ${from}`, () => controlPlane.startTransfer(ref, true, this.options.limits, this.options.method));
      }
    }
  }

  private async attempt(what: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.options.log.warn(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
