// The source side of a `wal_delta` transfer (Qdrant's): instead of every record, the source
// replays from its operation log only what the receiver's recovery point misses. The receiver
// (Recovery meanwhile) keeps its copy; its clock map says, per clock, the highest tick it took.
//
// Resolution, as Qdrant resolves a delta, over the clocks of updates (a transfer's own clocks,
// negative, are left out: a transfer's copy takes on its source's clock map, so they add nothing):
// the receiver must have a clock (else nothing says where it stands), must know no clock the
// source does not, and be ahead on none; for every clock it is behind on, the source's log must
// still hold every later tick (the source's cutoff says which it no longer holds). Otherwise the
// transfer falls back to `stream_records`, as Qdrant's does.
//
// Sending: the source's log is read from its oldest entry up to where its replica stood when the
// transfer started (the mark, taken in the step that started feeding the receiver); the delta
// starts at the first entry of an update's clock the receiver does not cover, and every entry
// from there on is replayed under its own clock tag in the lane slot kept ahead of the updates
// passed on (the receiver skips a tag it covers). A last update on the run's own clock closes
// the delta: the receiver takes no update passed on before it (src/peer/p2p-server.ts).

import { ClockMap, type ClockTag } from '../shard/clock-map.js';
import type { LogEntry } from '../shard/log-entry-codec.js';
import type { RecoveryPoint } from '../shard/shard.js';
import type { ShardReplica } from '../replica/replica.js';
import type { ApplyTask, LaneSlot } from '../replica/transfer-proxy.js';

/** Why the log cannot bring the receiver level: the transfer goes on as `stream_records`. */
export class DeltaUnavailable extends Error {}

/** Log entries read per request from the source's replica. */
const PAGE = 256;
/** Entries put in the lane and not yet applied by the receiver, at most. */
const AHEAD = 1024;

function clockKey(tag: ClockTag): string {
  return `${tag.peer}:${tag.clockId}`;
}

function updateClocks(tags: readonly ClockTag[]): Map<string, ClockTag> {
  return new Map(tags.filter((t) => t.clockId >= 0).map((t) => [clockKey(t), t]));
}

/**
 * The receiver's clocks the delta starts from, and whether it misses anything at all; throws
 * DeltaUnavailable with Qdrant's reason when the source's log cannot serve it.
 */
export function resolveDelta(receiver: RecoveryPoint, source: RecoveryPoint): { from: ClockMap; behind: boolean } {
  const theirs = updateClocks(receiver.clocks);
  const ours = updateClocks(source.clocks);
  const cutoff = updateClocks(source.cutoff);
  if (theirs.size === 0) throw new DeltaUnavailable('the receiver\'s recovery point is empty');
  for (const [key, tag] of theirs) {
    const own = ours.get(key);
    if (own === undefined) throw new DeltaUnavailable(`the receiver has clock ${key}, which the source does not know`);
    if (tag.tick > own.tick) throw new DeltaUnavailable(`the receiver is ahead of the source on clock ${key} (${tag.tick} > ${own.tick})`);
  }
  let behind = false;
  for (const [key, own] of ours) {
    const had = theirs.get(key)?.tick ?? 0;
    if (had >= own.tick) continue;
    behind = true;
    const gone = cutoff.get(key)?.tick ?? 0;
    if (gone > had) throw new DeltaUnavailable(`the source's log no longer holds clock ${key} after tick ${had} (it holds from tick ${gone + 1})`);
  }
  return { from: new ClockMap(receiver.clocks), behind };
}

/** An entry of the source's log as the receiver replays it: under its own tag. */
function replayOf(entry: LogEntry): ApplyTask {
  return { type: 'apply', ops: entry.ops, opId: entry.opId, clock: entry.clock, wait: true, dryRun: false, replay: true, ...(entry.adopt ? { adopt: entry.adopt } : {}) };
}

export interface DeltaSend {
  /** The source's own replica (its log). */
  source: ShardReplica;
  slot: LaneSlot;
  /** Where the source stood when the transfer started: the delta ends at its last entry. */
  mark: RecoveryPoint;
  from: ClockMap;
  stopped: () => boolean;
  progress: (done: number, total: number) => void;
}

/** Puts the delta in the slot; answers how many entries went, once the receiver applied them all. */
export async function sendDelta({ source, slot, mark, from, stopped, progress }: DeltaSend): Promise<number> {
  const sends: Promise<unknown>[] = [];
  let start = 0;
  for (let after = mark.firstSeq - 1; after < mark.lastSeq;) {
    if (stopped()) break;
    const page = await source.run({ type: 'log_after', after, limit: Math.min(PAGE, mark.lastSeq - after) }, null);
    if (page.length === 0) break;
    for (const entry of page) {
      if (entry.seq > mark.lastSeq) break;
      if (start === 0) {
        if (entry.clock.clockId < 0 || from.covers(entry.clock)) continue;
        start = entry.seq;
      }
      const sent = slot.put(replayOf(entry));
      sent.catch(() => undefined); // awaited below
      sends.push(sent);
    }
    after = page[page.length - 1].seq;
    if (start > 0) progress(sends.length, mark.lastSeq - start + 1);
    if (sends.length > AHEAD) await sends[sends.length - 1 - AHEAD];
  }
  if (start === 0 && !stopped()) throw new DeltaUnavailable('the source\'s log holds none of the operations the receiver misses');
  await Promise.all(sends);
  return sends.length;
}
