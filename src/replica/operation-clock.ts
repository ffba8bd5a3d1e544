// Operation ids: a write takes the next ones, so a shard records ids in the order it applies
// them, and the counter resumes after the highest id a shard recorded (on open or restore).
// Qdrant numbers operations per shard; on one node Quiver gives a collection's replica sets one
// clock, so the answers of a collection's writes stay distinct and consecutive whichever shards
// they reach. A write takes its ids holding the locks of every set it reaches
// (src/replica/shard-writes.ts), so each shard still sees its ids increase. The ids are also
// the ticks of the clock tags the shards log operations under (src/shard/clock-map.ts): a node
// alone is peer 0 with clock 0; a cluster peer tags with its peer id and its incarnation (counted
// up at every start, src/cluster/node-identity.ts), so a restarted peer, whose counter resumes
// from its own replicas only, never reuses a tag another peer's replica already holds (a shard
// skips a covered tag: a reused one would be a lost write).

import type { ClockTag } from '../shard/clock-map.js';

export class OperationClock {
  private last = 0;

  /** `peer` and `clockId`: whose clock this is (0 and 0 on a single node). */
  constructor(readonly peer = 0, readonly clockId = 0) {}

  /** An id a shard already holds: later writes number after it. */
  observe(id: number): void {
    this.last = Math.max(this.last, id);
  }

  /** The clock tag of operation `id`. */
  tagOf(id: number): ClockTag {
    return { peer: this.peer, clockId: this.clockId, tick: id };
  }

  /** Takes `count` consecutive ids; answers the first. */
  take(count: number): number {
    const first = this.last + 1;
    this.last += count;
    return first;
  }
}
