// A `wal_delta` transfer's resolution (src/cluster/wal-delta.ts), as Qdrant resolves a delta:
// which receivers a source's log can bring level, and the reason when it cannot (the transfer
// then falls back to stream_records); a transfer's own clocks (negative) are left out.

import t from 'tap';
import { DeltaUnavailable, resolveDelta } from '../src/cluster/wal-delta.js';
import type { ClockTag } from '../src/shard/clock-map.js';
import type { RecoveryPoint } from '../src/shard/shard.js';

const tag = (peer: number, clockId: number, tick: number): ClockTag => ({ peer, clockId, tick });
const point = (clocks: ClockTag[], cutoff: ClockTag[] = []): RecoveryPoint => ({ clocks, cutoff, firstSeq: 1, lastSeq: 100, appliedSeq: 100 });

function reason(receiver: RecoveryPoint, source: RecoveryPoint): string | null {
  try {
    resolveDelta(receiver, source);
    return null;
  } catch (err) {
    if (!(err instanceof DeltaUnavailable)) throw err;
    return err.message;
  }
}

t.test('a receiver behind on some clocks, whose missing ticks the log holds: a delta from its own clocks', async (t) => {
  const source = point([tag(1, 3, 50), tag(2, 1, 40), tag(3, 2, 9)], [tag(1, 3, 20)]);
  const { from, behind } = resolveDelta(point([tag(1, 3, 30), tag(2, 1, 40)]), source);
  t.ok(behind);
  t.ok(from.covers(tag(1, 3, 30)) && !from.covers(tag(1, 3, 31)), 'the delta starts after what the receiver took');
  t.notOk(from.covers(tag(3, 2, 1)), 'a clock it never saw: from its first tick');
});

t.test('a receiver level with the source: nothing to send', async (t) => {
  const clocks = [tag(1, 3, 50), tag(2, 1, 40)];
  t.equal(resolveDelta(point(clocks), point(clocks, clocks)).behind, false, 'even with every tick truncated');
});

t.test('transfers\' own clocks (negative) take no part', async (t) => {
  const source = point([tag(1, 3, 50), tag(4, -77, 12)], [tag(4, -77, 12)]);
  t.equal(resolveDelta(point([tag(1, 3, 50), tag(9, -5, 3)]), source).behind, false, 'one the source does not know, one it truncated');
});

t.test('Qdrant\'s refusals: empty, unknown clock, ahead, cut off', async (t) => {
  const source = point([tag(1, 3, 50), tag(2, 1, 40)], [tag(1, 3, 20)]);
  t.equal(reason(point([tag(7, -2, 5)]), source), 'the receiver\'s recovery point is empty', 'no clock of an update');
  t.equal(reason(point([tag(1, 3, 50), tag(5, 1, 1)]), source), 'the receiver has clock 5:1, which the source does not know');
  t.equal(reason(point([tag(1, 3, 51)]), source), 'the receiver is ahead of the source on clock 1:3 (51 > 50)');
  t.equal(reason(point([tag(1, 3, 19), tag(2, 1, 40)]), source), 'the source\'s log no longer holds clock 1:3 after tick 19 (it holds from tick 21)');
  t.equal(reason(point([tag(1, 3, 20)]), source), null, 'behind exactly to the cutoff: served (clock 2:1 from its first tick)');
  t.equal(reason(point([tag(1, 3, 20)]), point(source.clocks, [...source.cutoff, tag(2, 1, 1)])), 'the source\'s log no longer holds clock 2:1 after tick 0 (it holds from tick 2)', 'a clock it never saw, partly truncated');
});
