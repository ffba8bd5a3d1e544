// usearch (Unum's HNSW library, its Node binding) as a peer engine: one thread, f32 vectors, the
// same M / ef_construct / ef as the other graphs. Its binding fixes the search beam
// (expansion_search) when an index is opened, so the built index is saved once and reopened with
// each ef of the sweep before that ef's timed passes.

import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Distance } from '../engine/index.js';
import { CommandError } from '../errors.js';
import type { ProgressTask } from './progress.js';
import type { AnnRunner, GraphParams, IndexBytes } from './runners.js';
import { scratchDir } from './scratch.js';

type UsearchModule = typeof import('usearch');
type UsearchIndex = InstanceType<UsearchModule['Index']>;

/** usearch's metric (a MetricKind member) for each distance: squared L2 ranks as L2 does; it has no L1 metric. */
const USEARCH_METRIC: Record<Distance, 'L2sq' | 'Cos' | 'IP' | null> = { Euclid: 'L2sq', Cosine: 'Cos', Dot: 'IP', Manhattan: null };

async function loadUsearch(): Promise<UsearchModule> {
  try {
    return await import('usearch');
  } catch {
    throw new CommandError('usearch is not installed (npm install usearch), or leave it out with --engines');
  }
}

export class UsearchRunner implements AnnRunner {
  readonly name = 'usearch';
  readonly tunable = true;
  private usearch: UsearchModule | undefined;
  private index: UsearchIndex | undefined;
  private dir: string | undefined;
  private dim = 0;
  private size = 0;
  private ef = 0;

  constructor(private readonly params: GraphParams) {
    if (!USEARCH_METRIC[params.distance]) throw new CommandError(`usearch has no ${params.distance} metric; leave it out with --engines`);
  }

  prepare(vector: Float32Array): unknown {
    return vector;
  }

  async build(points: unknown[], dim: number, task: ProgressTask): Promise<void> {
    this.usearch = await loadUsearch();
    this.dim = dim;
    this.size = points.length;
    this.ef = this.params.efConstruct;
    const index = this.open(this.ef);
    for (let i = 0; i < points.length; i++) {
      index.add(BigInt(i), points[i] as Float32Array, 1);
      task.tick();
    }
    this.index = index;
  }

  async useEf(ef: number): Promise<void> {
    if (ef === this.ef) return;
    await this.save();
    const index = this.open(ef);
    index.load(this.file());
    this.index = index;
    this.ef = ef;
  }

  search(prepared: unknown, k: number): ArrayLike<number> {
    return Array.from(this.index!.search(prepared as Float32Array, k, 1).keys, Number);
  }

  memoryBytes(): null {
    return null;
  }

  /** The saved index: vectors and graph as usearch serializes them. */
  async indexBytes(): Promise<IndexBytes> {
    await this.save();
    return { total: (await stat(this.file())).size, vectors: this.size * this.dim * 4 };
  }

  async close(): Promise<void> {
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  private open(ef: number): UsearchIndex {
    const { Index, MetricKind, ScalarKind } = this.usearch!;
    return new Index({
      dimensions: this.dim,
      metric: MetricKind[USEARCH_METRIC[this.params.distance]!],
      quantization: ScalarKind.F32,
      connectivity: this.params.m,
      expansion_add: this.params.efConstruct,
      expansion_search: ef,
      multi: false,
    });
  }

  /** Saves the built index once (after the timed build), for its size and to reopen it per ef. */
  private async save(): Promise<void> {
    if (this.dir) return;
    this.dir = await scratchDir();
    this.index!.save(this.file());
  }

  private file(): string {
    return join(this.dir!, 'usearch.index');
  }
}
