// A collection's strict mode (Qdrant's `strict_mode_config`, enforced only while `enabled`): the
// checks a request must pass before it runs, in Qdrant's order and words, and the per-shard read
// and write rate limiters. Reads come described by strict-reads.ts; writes are the point
// operations the shards would apply.

import { BadRequest, InsufficientStorage, RateLimited, StrictModeViolation } from '../errors.js';
import { isMulti, isSparse, multiCount, type NamedVectors } from '../model.js';
import { formatJsonPath, parseJsonPath, type Filter } from '../shard/filter/index.js';
import type { IndexSpec } from '../shard/shard.js';
import type { WriteOp } from '../shard/write-ops.js';
import { residentMemoryPercent } from '../quota/meter.js';
import { rejectionMessage } from '../quota/verdict.js';
import { rustF32, rustFloat } from '../text/rust-format.js';
import type { StrictModeConfig } from './kept-config.js';
import { conditionCount, firstUnindexedKey, maxConditionSize, schemaKind, servesMatch } from './strict-filter.js';
import type { StrictRead } from './strict-reads.js';
import { TokenBucket, type Shortage } from './token-bucket.js';

/** A collection's size, as the size limits compare it. */
export interface CollectionSize {
  points: number;
  vectorBytes: number;
  payloadBytes: number;
}

function checkLimit(value: number | null | undefined, limit: number | null | undefined, name: string, print: (n: number) => string = String): void {
  if (value === null || value === undefined || limit === null || limit === undefined || value <= limit) return;
  throw new StrictModeViolation(`Limit exceeded ${print(value)} > ${print(limit)} for "${name}"`, `Reduce the "${name}" parameter to or below ${print(limit)}.`);
}

function checkExact(exact: boolean | null, allowed: boolean | null | undefined): void {
  if (allowed === false && exact === true) throw new StrictModeViolation('Exact search disabled!', 'Set exact=false.');
}

function sizeInMb(bytes: number): string {
  return rustF32(bytes / (1024 * 1024));
}

type RateKind = 'Read' | 'Write';

function rateLimited(kind: RateKind, cost: number, shortage: Shortage): RateLimited {
  if (shortage.kind === 'over_budget') {
    return new RateLimited(`${kind} rate limit exceeded, request larger than rate limiter capacity, please try to split your request`, null);
  }
  const retryAfterSec = Math.ceil(Math.fround(shortage.retryAfterSec));
  return new RateLimited(`${kind} rate limit exceeded: Operation requires ${cost} tokens but only ${shortage.available.toFixed(1)} were available. Retry after ${retryAfterSec}s`, retryAfterSec);
}

/** Operations that add data to memory; deletions never count (they are how a full node frees memory). */
const CONSUMES_MEMORY = new Set<WriteOp['kind']>(['upsert', 'update_vectors', 'set_payload', 'overwrite_payload']);

export class StrictMode {
  private config: StrictModeConfig;
  /** Per shard id; created full on first use. */
  private readonly readLimiters = new Map<number, TokenBucket>();
  private readonly writeLimiters = new Map<number, TokenBucket>();

  constructor(config: StrictModeConfig) {
    this.config = config;
  }

  /** New settings apply to the next request; rate limiters start again full, as Qdrant replaces them. */
  configure(config: StrictModeConfig): void {
    if (JSON.stringify(config) === JSON.stringify(this.config)) return;
    this.config = config;
    this.readLimiters.clear();
    this.writeLimiters.clear();
  }

  /** The settings, while strict mode is enabled. */
  private get active(): StrictModeConfig | null {
    return this.config.enabled === true ? this.config : null;
  }

  /** Whether reads are rate limited (their cost per shard then has to be worked out). */
  get limitsReads(): boolean {
    return typeof this.active?.read_rate_limit === 'number';
  }

  /** Whether writes are rate limited (their cost then has to be counted first). */
  get limitsWrites(): boolean {
    return typeof this.active?.write_rate_limit === 'number';
  }

  private checkFilter(filter: Filter | null, allowUnindexed: boolean | null | undefined, indexes: readonly IndexSpec[]): void {
    if (filter === null) return;
    const config = this.config;
    if (allowUnindexed === false) {
      const missing = firstUnindexedKey(filter, indexes);
      if (missing) {
        throw new StrictModeViolation(`Index required but not found for "${missing.key}" of one of the following types: [${missing.types.join(', ')}]`, 'Create an index for this key or use a different filter.');
      }
    }
    const count = conditionCount(filter);
    if (typeof config.filter_max_conditions === 'number' && count > config.filter_max_conditions) {
      throw new StrictModeViolation(`Filter condition limit reached (${count} > ${config.filter_max_conditions})`, 'Reduce the amount of conditions of your filter.');
    }
    const size = maxConditionSize(filter);
    if (typeof config.condition_max_size === 'number' && size > config.condition_max_size) {
      throw new StrictModeViolation(`Condition size limit reached (${size} > ${config.condition_max_size})`, 'Reduce the size of your condition.');
    }
  }

  private checkGroupBy(field: string, indexes: readonly IndexSpec[]): void {
    if (this.config.unindexed_filtering_retrieve !== false) return;
    // Indexes go by a key's canonical text; an unreadable key is the grouping's own error.
    const path = parseJsonPath(field);
    const groupBy = path ? formatJsonPath(path) : field;
    const index = indexes.find((i) => i.key === groupBy);
    if (!index) throw new StrictModeViolation(`Index required but not found for "${groupBy}"`, 'Create an index supporting `match` for this key.');
    if (!servesMatch(index.schema)) throw new StrictModeViolation(`Index of type "${schemaKind(index.schema)}" found for "${groupBy}"`, 'Create an index supporting `match` for this key.');
  }

  /** Refuses a read strict mode does not allow (its rate is admitted separately, per shard). */
  checkRead(read: StrictRead, timeout: number | null, indexes: readonly IndexSpec[]): void {
    const config = this.active;
    if (!config) return;
    checkLimit(read.batch, config.search_max_batchsize, 'search limit');
    if (read.groupBy !== null) this.checkGroupBy(read.groupBy, indexes);
    for (const check of read.checks) {
      checkLimit(check.limit, config.max_query_limit, 'limit');
      this.checkFilter(check.filter, config.unindexed_filtering_retrieve, indexes);
      checkExact(check.exact, config.search_allow_exact);
      if (check.params) {
        checkLimit(check.params.quantization?.oversampling, config.search_max_oversampling, 'oversampling', rustFloat);
        checkLimit(check.params.hnswEf, config.search_max_hnsw_ef, 'hnsw_ef');
        checkExact(check.params.exact, config.search_allow_exact);
      }
    }
    checkLimit(timeout, config.max_timeout, 'timeout');
  }

  /**
   * Takes `tokens` from each listed shard's limiter, or from none: a shard short of tokens
   * refuses the whole request (429 with Qdrant's wording and the wait in Retry-After).
   */
  private admit(kind: RateKind, limiters: Map<number, TokenBucket>, perMinute: number | null | undefined, costs: ReadonlyMap<number, number>): void {
    if (!this.active || typeof perMinute !== 'number') return;
    const buckets = [...costs].map(([shard, tokens]) => {
      let bucket = limiters.get(shard);
      if (!bucket) limiters.set(shard, (bucket = new TokenBucket(perMinute)));
      return { bucket, tokens };
    });
    for (const { bucket, tokens } of buckets) {
      const shortage = bucket.shortage(tokens);
      if (shortage) throw rateLimited(kind, tokens, shortage);
    }
    for (const { bucket, tokens } of buckets) bucket.take(tokens);
  }

  /** Admits a read's cost on each shard it reads (tokens per shard id). */
  admitRead(costs: ReadonlyMap<number, number>): void {
    this.admit('Read', this.readLimiters, this.active?.read_rate_limit, costs);
  }

  /** Admits a write's cost on each shard it changes (tokens per shard id). */
  admitWrite(costs: ReadonlyMap<number, number>): void {
    this.admit('Write', this.writeLimiters, this.active?.write_rate_limit, costs);
  }

  /** Multivector rows, then sparse lengths, each over every point (Qdrant's two passes). */
  private checkVectorLimits(points: readonly { vectors: NamedVectors }[]): void {
    const config = this.config;
    for (const { vectors } of points) {
      for (const [name, vector] of Object.entries(vectors)) {
        const maxVectors = config.multivector_config?.[name]?.max_vectors;
        if (isMulti(vector) && typeof maxVectors === 'number' && multiCount(vector) > maxVectors) {
          throw new BadRequest(`Multivector '${name}' has a limit of ${maxVectors} vectors, but ${multiCount(vector)} were provided!`);
        }
      }
    }
    for (const { vectors } of points) {
      for (const [name, vector] of Object.entries(vectors)) {
        const maxLength = config.sparse_config?.[name]?.max_length;
        if (isSparse(vector) && typeof maxLength === 'number' && vector.indices.length > maxLength) {
          throw new BadRequest(`Sparse vector '${name}' has a limit of ${maxLength} indices, but ${vector.indices.length} were provided!`);
        }
      }
    }
  }

  private checkSize(size: CollectionSize, limits: { vectors: boolean; payload: boolean; points: boolean }): void {
    const config = this.config;
    const { max_collection_vector_size_bytes: vectorBytes, max_collection_payload_size_bytes: payloadBytes, max_points_count: points } = config;
    if (limits.vectors && typeof vectorBytes === 'number' && size.vectorBytes >= vectorBytes) {
      throw new BadRequest(`Max vector storage size limit of ${sizeInMb(vectorBytes)}MB reached!`);
    }
    if (limits.payload && typeof payloadBytes === 'number' && size.payloadBytes >= payloadBytes) {
      throw new BadRequest(`Max payload storage size limit of ${sizeInMb(payloadBytes)}MB reached!`);
    }
    if (limits.points && typeof points === 'number' && size.points >= points) throw new BadRequest(`Max points count limit of ${points} reached!`);
  }

  private checkMemory(): void {
    const limit = this.config.max_resident_memory_percent;
    const used = typeof limit === 'number' ? residentMemoryPercent() : null;
    if (typeof limit === 'number' && used !== null && used >= limit) {
      throw new InsufficientStorage(rejectionMessage('resident_memory', used, limit, limit, "the collection's strict_mode_config"));
    }
  }

  private needsSize(ops: readonly WriteOp[]): boolean {
    const { max_collection_vector_size_bytes: v, max_collection_payload_size_bytes: p, max_points_count: n } = this.config;
    return ops.some((op) => op.kind === 'upsert' || op.kind === 'update_vectors' || op.kind === 'set_payload' || op.kind === 'overwrite_payload')
      && [v, p, n].some((limit) => typeof limit === 'number');
  }

  /**
   * Refuses a list of point operations strict mode does not allow, before any of them is sent
   * (a batch is checked whole). `size` is read only when a size limit applies.
   */
  async checkWrite(ops: readonly WriteOp[], indexes: readonly IndexSpec[], size: () => Promise<CollectionSize>): Promise<void> {
    const config = this.active;
    if (!config) return;
    const current = this.needsSize(ops) ? await size() : null;
    for (const op of ops) {
      if (op.kind === 'upsert' || op.kind === 'update_vectors') {
        checkLimit(op.points.length, config.upsert_max_batchsize, op.kind === 'upsert' ? 'upsert limit' : 'update limit');
        if (current) this.checkSize(current, { vectors: true, payload: true, points: true });
        this.checkVectorLimits(op.points);
      } else {
        if ((op.kind === 'set_payload' || op.kind === 'overwrite_payload') && current) this.checkSize(current, { vectors: false, payload: true, points: false });
        if ('filter' in op.target) this.checkFilter(op.target.filter, config.unindexed_filtering_update, indexes);
      }
      if (CONSUMES_MEMORY.has(op.kind)) this.checkMemory();
    }
  }

  /** Refuses a new payload index past `max_payload_index_count`. */
  checkIndexCount(existing: number): void {
    const max = this.active?.max_payload_index_count;
    if (typeof max === 'number' && existing >= max) {
      throw new StrictModeViolation(`Collection already has the maximum number of payload indices (${max})`, 'Please delete an existing index before creating a new one.');
    }
  }
}
