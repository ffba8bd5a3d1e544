// A shard's operation log, kept in the shard's own store under "l:" + the sequence number in
// fixed-width hex (so key order is log order). Entries are grouped into segments as Qdrant's WAL
// groups them: a segment takes entries until the next would pass `wal_capacity_mb` (an entry
// larger than that fills one alone), then it is closed and a new one opened. Once the shard has
// persisted the state a closed segment's entries lead to, the segment may go; the newest
// `wal_retain_closed` closed segments stay so that a lagging replica can still catch up from the
// log (Qdrant's wal_delta), and the open segment always stays. Segment bounds are not stored:
// they are recomputed from the entries' sizes on open, which gives the same bounds because
// truncation only ever removes whole segments from the front. Each segment also knows the
// highest tick of every clock among its entries, so that truncating it tells the shard which
// operations its log no longer holds (the shard's cutoff, src/shard/shard.ts).
//
// Appending and truncating are two-step: the caller writes the keys (the entry alone, synced;
// the truncation in the batch that stores the point records it allows), and only then tells the
// log, so a failed write leaves no gap in the sequence.

import type { ClassicLevel } from 'classic-level';
import { BadRequest, LogTruncated } from '../errors.js';
import { ClockMap, type ClockTag } from './clock-map.js';
import { decodeEntry, encodeEntry, type LogEntry } from './log-entry-codec.js';
import type { WriteOp } from './write-ops.js';

/** Qdrant's wal_config as the log uses it. */
export interface WalSpec {
  /** wal_capacity_mb in bytes: how much of the log one segment holds. */
  capacityBytes: number;
  /** wal_retain_closed: closed segments kept after their entries are persisted. */
  retainClosed: number;
}

/** Qdrant's defaults: 32 MB segments, one closed segment kept. */
export const DEFAULT_WAL_SPEC: WalSpec = { capacityBytes: 32 << 20, retainClosed: 1 };

/** The part of a store batch the log writes to. */
export interface LogBatch {
  put(key: string, value: Uint8Array): unknown;
  del(key: string): unknown;
}

export interface PreparedAppend {
  entry: LogEntry;
  key: string;
  value: Uint8Array;
}

interface Segment {
  first: number;
  last: number;
  bytes: number;
  /** The highest tick of each clock among its entries. */
  clocks: ClockMap;
}

const LOG_PREFIX = 'l:';
/** Sequence numbers stay below 2^53: 14 hex digits. */
const SEQ_DIGITS = 14;

/** Adds an entry to the open segment, or opens a new one when it would not fit. */
function place(segments: Segment[], capacityBytes: number, seq: number, bytes: number, clock: ClockTag): void {
  const open = segments.at(-1);
  if (open && open.bytes + bytes <= capacityBytes) {
    open.last = seq;
    open.bytes += bytes;
    open.clocks.advance(clock);
  } else {
    segments.push({ first: seq, last: seq, bytes, clocks: new ClockMap([clock]) });
  }
}

function logKey(seq: number): string {
  return LOG_PREFIX + seq.toString(16).padStart(SEQ_DIGITS, '0');
}

export class OpLog {
  private readonly segments: Segment[] = [];

  /** `last`: the last sequence number ever given, for a log whose entries are all gone. */
  private constructor(private readonly db: ClassicLevel<string, Uint8Array>, private readonly spec: WalSpec, private last: number) {}

  /** Reads the segment bounds of the stored log; `persistedSeq` is the shard's applied marker. */
  static async open(db: ClassicLevel<string, Uint8Array>, spec: WalSpec, persistedSeq: number): Promise<OpLog> {
    const log = new OpLog(db, spec, persistedSeq);
    for await (const value of db.values({ gte: LOG_PREFIX, lt: LOG_PREFIX + '\uffff' })) {
      const entry = decodeEntry(value);
      log.account(entry.seq, value.byteLength, entry.clock);
    }
    return log;
  }

  /** The sequence number of the newest entry (0 for a shard that never logged one). */
  get lastSeq(): number {
    return this.last;
  }

  /** The sequence number of the oldest entry held; lastSeq + 1 when none is. */
  get firstSeq(): number {
    return this.segments[0]?.first ?? this.last + 1;
  }

  /**
   * The next entries, one per operation in order, in their stored form; nothing changes until
   * appended() is told of each after the caller's batch is written.
   */
  prepare(operations: readonly { opId: number; clock: ClockTag; ops: WriteOp[]; adopt?: ClockTag[] }[]): PreparedAppend[] {
    return operations.map(({ opId, clock, ops, adopt }, i) => {
      const entry: LogEntry = { seq: this.last + 1 + i, opId, clock, ops, ...(adopt ? { adopt } : {}) };
      return { entry, key: logKey(entry.seq), value: encodeEntry(entry) };
    });
  }

  appended(append: PreparedAppend): void {
    this.account(append.entry.seq, append.value.byteLength, append.entry.clock);
  }

  private account(seq: number, bytes: number, clock: ClockTag): void {
    place(this.segments, this.spec.capacityBytes, seq, bytes, clock);
    this.last = seq;
  }

  /**
   * Puts in `batch` the removal of the closed segments that are no longer needed once the state
   * after `persistedSeq` is stored by that batch; answers how many, for truncated().
   */
  truncate(batch: LogBatch, persistedSeq: number): number {
    const segments = this.segments;
    const closed = segments.length - 1;
    let persisted = 0;
    while (persisted < closed && segments[persisted].last <= persistedSeq) persisted++;
    const count = Math.max(0, Math.min(persisted, closed - this.spec.retainClosed));
    for (const segment of segments.slice(0, count)) {
      for (let seq = segment.first; seq <= segment.last; seq++) batch.del(logKey(seq));
    }
    return count;
  }

  /** The highest tick of each clock among the entries of the first `count` segments (those `truncate` removes). */
  clocksOf(count: number): ClockTag[] {
    const clocks = new ClockMap();
    for (const segment of this.segments.slice(0, count)) for (const tag of segment.clocks.tags()) clocks.advance(tag);
    return clocks.tags();
  }

  truncated(count: number): void {
    this.segments.splice(0, count);
  }

  /**
   * Up to `limit` entries after sequence number `after`, oldest first: what a replica that has
   * everything up to `after` misses. LogTruncated when some of them are no longer held.
   */
  async entriesAfter(after: number, limit: number): Promise<LogEntry[]> {
    if (after > this.last) throw new BadRequest(`the operation log ends at ${this.last}, there is no operation ${after}`);
    if (after + 1 < this.firstSeq) {
      throw new LogTruncated(`operations after ${after} are no longer in the operation log (it holds ${this.firstSeq} to ${this.last})`);
    }
    const out: LogEntry[] = [];
    for await (const entry of this.entries(after, limit)) out.push(entry);
    return out;
  }

  /** Entries after `after` in order, at most `limit` (-1: all). */
  async *entries(after: number, limit = -1): AsyncGenerator<LogEntry> {
    for await (const value of this.db.values({ gt: logKey(after), lt: LOG_PREFIX + '\uffff', limit })) yield decodeEntry(value);
  }
}
