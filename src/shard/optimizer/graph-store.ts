// Persisted graphs in a shard's own store, beside its point records: each named vector's
// serialised index (assembly/persist.ts, written and read in parts, so an image may pass the
// engine's 1 GiB block) and each sparse vector's index image (src/engine/sparse-persist.ts) in chunks, and one meta record saying which point id sits at
// each offset and the last operation id the images include. Written as one synced batch, so a
// crash leaves the previous images or the new ones, never a mix.

import type { ClassicLevel } from 'classic-level';
import { IMAGE_PART_BYTES, joinParts } from '../../engine/image-parts.js';
import type { PointId } from '../../model.js';
import type { SparseVectorSpec, VectorSpec } from '../shard.js';
import { fromStoredId, toStoredId, type StoredId } from '../stored-id.js';

const META_KEY = 'g:meta';
// Dense images come in parts of this size (VectorIndex.serializeParts), stored one per chunk.
const CHUNK_BYTES = IMAGE_PART_BYTES;

/** Dense graphs and sparse images are kept apart by the key's kind letter. */
type Kind = 'v' | 's';

function chunkKey(kind: Kind, name: string, chunk: number): string {
  return `g:${kind}:${name}:${chunk}`;
}

interface StoredImage {
  name: string;
  params: string;
  chunks: number;
}

export interface GraphMeta {
  /** Every operation up to this id is in the graphs; records of later versions are not. */
  lastOp: number;
  /** The point id at each offset (in its stored form); null for a free offset. */
  ids: (StoredId | null)[];
  vectors: StoredImage[];
  /** Absent in stores written before sparse images were persisted. */
  sparse?: StoredImage[];
}

export interface StoredGraphs {
  lastOp: number;
  ids: (PointId | null)[];
  /** Serialised index of each named vector built with the parameters the vector has now, in its stored parts. */
  images: Map<string, Uint8Array[]>;
  /** Image of each sparse vector's index, likewise. */
  sparseImages: Map<string, Uint8Array>;
}

/** Images to write, by vector name; a null sparse image keeps the stored one (its index did not change). */
export interface GraphImages {
  /** Each dense image in parts (in order, any sizes). */
  dense: Map<string, readonly Uint8Array[]>;
  sparse: Map<string, Uint8Array | null>;
}

/** What a graph depends on: a graph built with other parameters is rebuilt, not loaded. */
export function graphParams(spec: VectorSpec): string {
  // A multivector graph and a float16/uint8 one say so; others keep the form graphs were stored
  // with before multivectors and datatypes.
  // Binary, product and turbo quantization say so too (int8 keeps its quantile in the older slot).
  const datatype = spec.datatype && spec.datatype !== 'float32' ? [spec.datatype] : [];
  const q = spec.quantization;
  const quantile = q && 'quantile' in q ? q.quantile ?? null : null;
  // A one_bit graph with the query binarised keeps its earlier form; other encodings and scalar
  // query encodings add theirs (the query encoding is persisted with the codes).
  const binary = q?.method !== 'binary' ? [] : [
    'binary',
    ...(q.encoding && q.encoding !== 'one_bit' ? [q.encoding] : []),
    ...(q.queryEncoding ? [q.queryEncoding] : []),
  ];
  const product = q?.method === 'product' ? ['product', q.compression] : [];
  const turbo = q?.method === 'turbo' ? ['turbo', q.bits ?? 'bits4'] : [];
  return JSON.stringify([spec.size, spec.distance, spec.m, spec.efConstruct, quantile, q !== null, ...(spec.multivector ? ['max_sim'] : []), ...datatype, ...binary, ...product, ...turbo]);
}

/** What a sparse index image depends on: one stored in another form is rebuilt, not loaded. */
export function sparseImageParams(spec: SparseVectorSpec): string {
  return JSON.stringify([spec.datatype]);
}

export class GraphStore {
  /** Chunks stored per chunk key prefix, so a smaller image deletes the chunks it no longer uses. */
  private readonly chunks = new Map<string, { kind: Kind; name: string; chunks: number }>();

  constructor(private readonly db: ClassicLevel<string, Uint8Array>) {}

  /** The stored images usable with `specs` and `sparseSpecs`, or null when there are none. */
  async read(specs: readonly VectorSpec[], sparseSpecs: readonly SparseVectorSpec[]): Promise<StoredGraphs | null> {
    const raw = await this.db.get(META_KEY);
    if (!raw) return null;
    const meta = JSON.parse(new TextDecoder().decode(raw)) as GraphMeta;
    const images = await this.readImages('v', meta.vectors, (name) => {
      const spec = specs.find((s) => s.name === name);
      return spec && graphParams(spec);
    });
    const sparseParts = await this.readImages('s', meta.sparse ?? [], (name) => {
      const spec = sparseSpecs.find((s) => s.name === name);
      return spec && sparseImageParams(spec);
    });
    const sparseImages = new Map([...sparseParts].map(([name, parts]) => [name, joinParts(parts)]));
    return { lastOp: meta.lastOp, ids: meta.ids.map((id) => (id === null ? null : fromStoredId(id))), images, sparseImages };
  }

  async write(specs: readonly VectorSpec[], sparseSpecs: readonly SparseVectorSpec[], images: GraphImages, ids: (PointId | null)[], lastOp: number): Promise<void> {
    const batch = this.db.batch();
    const written = new Map<string, { kind: Kind; name: string; chunks: number }>();
    const put = (kind: Kind, name: string, params: string, parts: readonly Uint8Array[]): StoredImage => {
      let chunks = 0;
      for (const part of parts) {
        for (let at = 0; at < part.byteLength; at += CHUNK_BYTES) batch.put(chunkKey(kind, name, chunks++), part.subarray(at, at + CHUNK_BYTES));
      }
      written.set(chunkKey(kind, name, 0), { kind, name, chunks });
      return { name, params, chunks };
    };
    const meta: GraphMeta = {
      lastOp,
      ids: ids.map((id) => (id === null ? null : toStoredId(id))),
      vectors: specs.filter((spec) => images.dense.has(spec.name)).map((spec) => put('v', spec.name, graphParams(spec), images.dense.get(spec.name)!)),
      sparse: sparseSpecs.flatMap((spec) => {
        const image = images.sparse.get(spec.name);
        if (image) return [put('s', spec.name, sparseImageParams(spec), [image])];
        const kept = image === null ? this.chunks.get(chunkKey('s', spec.name, 0)) : undefined;
        if (!kept) return [];
        written.set(chunkKey('s', spec.name, 0), kept);
        return [{ name: spec.name, params: sparseImageParams(spec), chunks: kept.chunks }];
      }),
    };
    for (const [key, before] of this.chunks) {
      for (let i = written.get(key)?.chunks ?? 0; i < before.chunks; i++) batch.del(chunkKey(before.kind, before.name, i));
    }
    batch.put(META_KEY, new TextEncoder().encode(JSON.stringify(meta)));
    await batch.write({ sync: true });
    this.chunks.clear();
    for (const [key, entry] of written) this.chunks.set(key, entry);
  }

  /** The stored images of one kind whose parameters are `paramsOf` their vector's now (undefined: no such vector). */
  private async readImages(kind: Kind, stored: readonly StoredImage[], paramsOf: (name: string) => string | undefined): Promise<Map<string, Uint8Array[]>> {
    const images = new Map<string, Uint8Array[]>();
    for (const { name, params, chunks } of stored) {
      this.chunks.set(chunkKey(kind, name, 0), { kind, name, chunks });
      if (paramsOf(name) !== params) continue;
      const parts = await this.db.getMany(Array.from({ length: chunks }, (_, i) => chunkKey(kind, name, i)));
      if (parts.some((p) => p === undefined)) continue;
      images.set(name, parts as Uint8Array[]);
    }
    return images;
  }
}
