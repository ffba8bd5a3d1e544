// Persisted graphs in a shard's own store, beside its point records: each named vector's
// serialised index (assembly/persist.ts) in chunks, and one meta record saying which point id
// sits at each offset and the last operation id the graphs include. Written as one synced batch,
// so a crash leaves the previous graphs or the new ones, never a mix.

import type { ClassicLevel } from 'classic-level';
import type { PointId } from '../../model.js';
import type { VectorSpec } from '../shard.js';
import { fromStoredId, toStoredId, type StoredId } from '../stored-id.js';

const META_KEY = 'g:meta';
const CHUNK_BYTES = 4 << 20;

function chunkKey(name: string, chunk: number): string {
  return `g:v:${name}:${chunk}`;
}

export interface GraphMeta {
  /** Every operation up to this id is in the graphs; records of later versions are not. */
  lastOp: number;
  /** The point id at each offset (in its stored form); null for a free offset. */
  ids: (StoredId | null)[];
  vectors: { name: string; params: string; chunks: number }[];
}

export interface StoredGraphs {
  lastOp: number;
  ids: (PointId | null)[];
  /** Serialised index of each named vector built with the parameters the vector has now. */
  images: Map<string, Uint8Array>;
}

/** What a graph depends on: a graph built with other parameters is rebuilt, not loaded. */
export function graphParams(spec: VectorSpec): string {
  // A multivector graph and a float16/uint8 one say so; others keep the form graphs were stored
  // with before multivectors and datatypes.
  const datatype = spec.datatype && spec.datatype !== 'float32' ? [spec.datatype] : [];
  return JSON.stringify([spec.size, spec.distance, spec.m, spec.efConstruct, spec.quantization?.quantile ?? null, spec.quantization !== null, ...(spec.multivector ? ['max_sim'] : []), ...datatype]);
}

export class GraphStore {
  /** Chunks stored per vector name, so a smaller image deletes the chunks it no longer uses. */
  private readonly chunks = new Map<string, number>();

  constructor(private readonly db: ClassicLevel<string, Uint8Array>) {}

  /** The stored graphs usable with `specs`, or null when there are none. */
  async read(specs: readonly VectorSpec[]): Promise<StoredGraphs | null> {
    const raw = await this.db.get(META_KEY);
    if (!raw) return null;
    const meta = JSON.parse(new TextDecoder().decode(raw)) as GraphMeta;
    const images = new Map<string, Uint8Array>();
    for (const stored of meta.vectors) {
      this.chunks.set(stored.name, stored.chunks);
      const spec = specs.find((s) => s.name === stored.name);
      if (!spec || graphParams(spec) !== stored.params) continue;
      const parts = await this.db.getMany(Array.from({ length: stored.chunks }, (_, i) => chunkKey(stored.name, i)));
      if (parts.some((p) => p === undefined)) continue;
      images.set(stored.name, concat(parts as Uint8Array[]));
    }
    return { lastOp: meta.lastOp, ids: meta.ids.map((id) => (id === null ? null : fromStoredId(id))), images };
  }

  async write(specs: readonly VectorSpec[], images: Map<string, Uint8Array>, ids: (PointId | null)[], lastOp: number): Promise<void> {
    const batch = this.db.batch();
    const meta: GraphMeta = { lastOp, ids: ids.map((id) => (id === null ? null : toStoredId(id))), vectors: [] };
    const written = new Map<string, number>();
    for (const spec of specs) {
      const image = images.get(spec.name);
      if (!image) continue;
      const chunks = Math.ceil(image.byteLength / CHUNK_BYTES);
      for (let i = 0; i < chunks; i++) batch.put(chunkKey(spec.name, i), image.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
      meta.vectors.push({ name: spec.name, params: graphParams(spec), chunks });
      written.set(spec.name, chunks);
    }
    for (const [name, before] of this.chunks) {
      for (let i = written.get(name) ?? 0; i < before; i++) batch.del(chunkKey(name, i));
    }
    batch.put(META_KEY, new TextEncoder().encode(JSON.stringify(meta)));
    await batch.write({ sync: true });
    this.chunks.clear();
    for (const [name, n] of written) this.chunks.set(name, n);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
