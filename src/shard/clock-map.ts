// Clock tags and a shard's clock map. Every operation carries the tag Qdrant gives an update
// (the peer it came from, one of that peer's clocks, the clock's tick); a shard remembers the
// highest tick it has taken from each (peer, clock). An operation whose tick is not above that
// was taken before (a retry, or a replica catch-up that overlaps what it already has), so the
// shard skips it: replaying an operation changes nothing. The map is the shard's recovery point:
// a replica sends it to a source to learn which operations it misses.

export interface ClockTag {
  peer: number;
  clockId: number;
  tick: number;
}

export class ClockMap {
  private readonly ticks = new Map<string, ClockTag>();

  constructor(tags: readonly ClockTag[] = []) {
    for (const tag of tags) this.advance(tag);
  }

  private static keyOf(tag: ClockTag): string {
    return `${tag.peer}:${tag.clockId}`;
  }

  /** True when the map already holds `tag`'s tick (or a later one) for its clock. */
  covers(tag: ClockTag): boolean {
    return (this.ticks.get(ClockMap.keyOf(tag))?.tick ?? -1) >= tag.tick;
  }

  /** Raises the tick of `tag`'s clock to `tag.tick` (never lowers it). */
  advance(tag: ClockTag): void {
    if (!this.covers(tag)) this.ticks.set(ClockMap.keyOf(tag), { ...tag });
  }

  /** Every clock with its highest tick, ordered by peer then clock id. */
  tags(): ClockTag[] {
    return [...this.ticks.values()].sort((a, b) => a.peer - b.peer || a.clockId - b.clockId);
  }
}
