// What the optimizer of one shard should do next for one named vector's index, by Qdrant's rules:
// new vectors stay unlinked (searched exactly, like Qdrant's plain appendable segment) until they
// hold `indexing_threshold` KiB, then they are linked into the graph; a graph whose share of
// deleted vectors passes `deleted_threshold` is rebuilt without them.

/** The optimizer settings of a collection (Qdrant's optimizers_config), as a shard applies them. */
export interface OptimizerSpec {
  /** KiB of unlinked vectors past which they are linked (1 KiB = one 256-d vector); null = Qdrant's default, 0 = never. */
  indexingThresholdKb: number | null;
  /** Share of deleted vectors in a graph past which it is rebuilt without them. */
  deletedThreshold: number;
  /** Fewest vectors (live and deleted) a graph must hold to be vacuumed. */
  vacuumMinVectorNumber: number;
  /** Qdrant's max_optimization_threads: 0 disables optimizations, null means no limit. */
  maxOptimizationThreads: number | null;
}

/** What Qdrant uses when indexing_threshold is null. */
export const DEFAULT_INDEXING_THRESHOLD_KB = 10000;

export const DEFAULT_OPTIMIZER_SPEC: OptimizerSpec = {
  indexingThresholdKb: null,
  deletedThreshold: 0.2,
  vacuumMinVectorNumber: 1000,
  maxOptimizationThreads: null,
};

/** Qdrant's optimizer names. */
export type OptimizerName = 'indexing' | 'vacuum';

/** The counts of one vector index the plan is made from. */
export interface IndexCounts {
  /** Bytes of one vector's components in its datatype (Qdrant sizes storage by its element type). */
  vectorBytes: number;
  /** Live vectors, linked or not. */
  live: number;
  /** Live vectors not linked yet. */
  pending: number;
  /** Deleted vectors still in the graph. */
  deleted: number;
  hasGraph: boolean;
}

export function indexingThresholdBytes(spec: OptimizerSpec): number {
  const kb = spec.indexingThresholdKb ?? DEFAULT_INDEXING_THRESHOLD_KB;
  return kb === 0 ? Infinity : kb * 1024;
}

export function plannedOptimization(counts: IndexCounts, spec: OptimizerSpec): OptimizerName | null {
  const inGraph = counts.live + counts.deleted;
  if (counts.hasGraph && counts.deleted > 0 && inGraph >= spec.vacuumMinVectorNumber && counts.deleted / inGraph > spec.deletedThreshold) return 'vacuum';
  if (counts.pending > 0 && counts.pending * counts.vectorBytes >= indexingThresholdBytes(spec)) return 'indexing';
  return null;
}
