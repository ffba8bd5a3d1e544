// Operation ids: a write takes the next ones, so a shard records ids in the order it applies
// them, and the counter resumes after the highest id a shard recorded (on open or restore).
// Qdrant numbers operations per shard; on one node Quiver gives a collection's replica sets one
// clock, so the answers of a collection's writes stay distinct and consecutive whichever shards
// they reach. A write takes its ids holding the locks of every set it reaches
// (src/replica/shard-writes.ts), so each shard still sees its ids increase.

export class OperationClock {
  private last = 0;

  /** An id a shard already holds: later writes number after it. */
  observe(id: number): void {
    this.last = Math.max(this.last, id);
  }

  /** Takes `count` consecutive ids; answers the first. */
  take(count: number): number {
    const first = this.last + 1;
    this.last += count;
    return first;
  }
}
