// A history of acknowledged writes, and its check against what a cluster holds after it healed.
// Writers own disjoint ids and write each id one write at a time, so an id's last acknowledged
// value is the one it must end with; a write that failed is retried with a newer value until it
// is acknowledged, so no unacknowledged value may stand last either.

import { call } from './api-http.js';
import { until, type ClusterPeer } from './cluster.js';

export interface HistoryCounts {
  /** Writes acknowledged (each of several points). */
  acknowledged: number;
  /** Attempts that failed and were retried. */
  failed: number;
  /** Points written at least once. */
  points: number;
}

/** When and through which peer an id's last acknowledged value was written: the evidence of a mismatch. */
interface Acknowledgement {
  at: number;
  via: string;
}

export class AckHistory {
  private readonly last = new Map<number, number>();
  private readonly lastAck = new Map<number, Acknowledgement>();
  private acknowledged = 0;
  private failed = 0;

  /** A write of `value` to every id of `ids` was acknowledged (through the peer at `via`, if told). */
  acknowledge(ids: readonly number[], value: number, via = ''): void {
    this.acknowledged++;
    const at = Date.now();
    for (const id of ids) {
      this.last.set(id, value);
      this.lastAck.set(id, { at, via });
    }
  }

  /** A write failed (it may have reached some replicas: its retry supersedes it). */
  fail(): void {
    this.failed++;
  }

  get counts(): HistoryCounts {
    return { acknowledged: this.acknowledged, failed: this.failed, points: this.last.size };
  }

  /** [id, value] of every point written, in id order: what every replica must hold. */
  expected(): [number, number][] {
    return [...this.last].sort((a, b) => a[0] - b[0]);
  }

  /**
   * What a collection holds through `peer` with `consistency`, set against the history: points
   * missing, points whose value is not their last acknowledged one, and points never written.
   */
  async differences(peer: ClusterPeer, collection: string, consistency: string): Promise<{ missing: number; stale: number; unknown: number }> {
    const held = await this.held(peer, collection, consistency);
    let missing = 0;
    let stale = 0;
    for (const [id, value] of this.last) {
      if (!held.has(id)) missing++;
      else if (held.get(id) !== value) stale++;
    }
    const unknown = [...held.keys()].filter((id) => !this.last.has(id)).length;
    return { missing, stale, unknown };
  }

  /**
   * The points `differences` counts as missing or stale, up to `max`, each (and its `label`) with
   * its last acknowledged value, when (ms since `since`) and through which peer it was acknowledged.
   */
  async mismatches(peer: ClusterPeer, collection: string, consistency: string, since: number, max = 20, label: (id: number) => string = () => ''): Promise<string[]> {
    const held = await this.held(peer, collection, consistency);
    const found: string[] = [];
    for (const [id, value] of this.last) {
      if (held.get(id) === value) continue;
      const { at, via } = this.lastAck.get(id)!;
      found.push(`id ${id}${label(id)}: v ${value} acknowledged at +${at - since} ms through ${via || '?'}, held ${held.has(id) ? `v ${held.get(id)}` : 'nothing'}`);
      if (found.length === max) break;
    }
    return found;
  }

  private async held(peer: ClusterPeer, collection: string, consistency: string): Promise<Map<number, number>> {
    const answer = await call(peer.url, 'POST', `/collections/${collection}/points/scroll?consistency=${consistency}`, { limit: this.last.size + 1000, with_payload: true });
    if (answer.status !== 200) throw new Error(`scroll through ${peer.url}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return new Map((answer.body as { result: { points: { id: number; payload: { v: number } }[] } }).result.points.map((p) => [p.id, p.payload.v]));
  }
}

/**
 * A writer through one peer until `stopped()`: each round writes a few of its own ids with a
 * newer value (`wait=true`), retrying a failed round with a newer value until it is acknowledged,
 * so the writer always stops on an acknowledged write (within `retryMs` of being stopped, unless
 * its peer stays unreachable).
 */
export async function runWriter(options: {
  peer: () => ClusterPeer;
  collection: string;
  ids: readonly number[];
  perWrite: number;
  history: AckHistory;
  stopped: () => boolean;
  vector: (id: number) => number[];
  retryMs?: number;
}): Promise<void> {
  const { collection, ids, perWrite, history } = options;
  let round = 0;
  let value = 0;
  let pending = false;
  let giveUpAt = Infinity;
  let lastFailure = '';
  while (pending || !options.stopped()) {
    if (options.stopped() && giveUpAt === Infinity) giveUpAt = Date.now() + (options.retryMs ?? 60_000);
    if (Date.now() > giveUpAt) throw new Error(`a writer of ${collection} through ${options.peer().url} could not get its last write acknowledged; its last failure: ${lastFailure}`);
    const batch = Array.from({ length: perWrite }, (_, i) => ids[(round * perWrite + i) % ids.length]);
    value++;
    const body = { points: batch.map((id) => ({ id, vector: options.vector(id), payload: { v: value } })) };
    let ok = false;
    const via = options.peer().url;
    try {
      const answer = await call(via, 'PUT', `/collections/${collection}/points?wait=true`, body);
      ok = answer.status === 200 && (answer.body as { result: { status: string } }).result.status === 'completed';
      if (!ok) lastFailure = `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
    } catch (err) {
      ok = false; // the peer is down: the round is retried
      lastFailure = String(err);
    }
    if (ok) {
      history.acknowledge(batch, value, via);
      pending = false;
      round++;
    } else {
      history.fail();
      pending = true;
      // The round's ids again, with a newer value: a peer that is down is not hammered.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Waits (bounded) until `more` writes were acknowledged in `histories` together since the call. */
export async function untilAcknowledged(what: string, histories: readonly AckHistory[], more: number, ms = 60_000): Promise<void> {
  const acknowledged = () => histories.reduce((n, h) => n + h.counts.acknowledged, 0);
  const from = acknowledged();
  await until(what, async () => acknowledged() >= from + more, ms);
}
