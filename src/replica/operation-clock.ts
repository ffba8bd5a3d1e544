// Operation ids: a write takes the next ones, so a shard records ids in the order it applies
// them, and the counter resumes after the highest id a shard recorded (on open or restore).

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
