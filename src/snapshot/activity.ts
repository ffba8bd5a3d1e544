// What snapshot work each collection has seen since the node started, for telemetry's
// `collections.snapshots` (Qdrant's CollectionSnapshotTelemetry): collection snapshots being
// made and recoveries running now, and how many collection snapshots were made.

export interface SnapshotCounts {
  running_snapshots: number;
  running_snapshot_recovery: number;
  total_snapshot_creations: number;
}

export class SnapshotActivity {
  private readonly byCollection = new Map<string, SnapshotCounts>();

  private countsOf(name: string): SnapshotCounts {
    let counts = this.byCollection.get(name);
    if (!counts) this.byCollection.set(name, (counts = { running_snapshots: 0, running_snapshot_recovery: 0, total_snapshot_creations: 0 }));
    return counts;
  }

  /** Runs the making of a snapshot of collection `name`; a finished one counts as a creation. */
  async creating<T>(name: string, work: () => Promise<T>): Promise<T> {
    const counts = this.countsOf(name);
    counts.running_snapshots++;
    try {
      const made = await work();
      counts.total_snapshot_creations++;
      return made;
    } finally {
      counts.running_snapshots--;
    }
  }

  /** Runs a recovery of (a shard of) collection `name` from a snapshot. */
  async recovering<T>(name: string, work: () => Promise<T>): Promise<T> {
    const counts = this.countsOf(name);
    counts.running_snapshot_recovery++;
    try {
      return await work();
    } finally {
      counts.running_snapshot_recovery--;
    }
  }

  /** The counts of collection `name` (all zero if it saw no snapshot work). */
  of(name: string): SnapshotCounts {
    return { ...this.countsOf(name) };
  }
}
