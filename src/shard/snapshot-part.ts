// A shard's part of a snapshot, written and restored inside the shard's worker thread so point
// data never crosses to the main thread. The part is the shard's stored point records, each as
// a u32 (little-endian) length then the record in its on-disk form (src/shard/point-codec.ts).
// Restoring builds a complete new store beside the live one and only then swaps directories.

import { v4 as randomUUID } from 'uuid';
import { createReadStream } from 'node:fs';
import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { shardOf } from './routing.js';
import { isMulti, isSparse, type PointId } from '../model.js';
import { decodePoint } from './point-codec.js';
import { Shard, type ShardSpec } from './shard.js';
import type { PointRecord } from './write-ops.js';
import { InvalidArchive, type FileSlice } from '../storage/tar.js';

/** Which shard of how many a restored shard is: every point in it must route there. */
export interface ShardRoute {
  index: number;
  count: number;
}

const WRITE_CHUNK = 1 << 20;

/** Suffixes of the directories a recovery works with beside a shard's own: the new store being built, the old one being replaced. */
const STAGED = '.recovering-';
export const REPLACED = '.replaced-';

/** Writes the shard's points to a new file at `path` (synced); answers how many. */
export async function writeShardPart(shard: Shard, path: string): Promise<number> {
  const file = await open(path, 'wx');
  try {
    let buffer = new Uint8Array(WRITE_CHUNK);
    let used = 0;
    let count = 0;
    const flush = async (): Promise<void> => {
      await file.write(buffer, 0, used);
      used = 0;
    };
    for await (const record of shard.storedPoints()) {
      if (used + 4 + record.length > buffer.length) {
        await flush();
        if (4 + record.length > buffer.length) buffer = new Uint8Array(4 + record.length);
      }
      new DataView(buffer.buffer).setUint32(used, record.length, true);
      buffer.set(record, used + 4);
      used += 4 + record.length;
      count++;
    }
    await flush();
    await file.sync();
    return count;
  } finally {
    await file.close();
  }
}

/** The stored records of a part, read in chunks; a record cut short is an error. */
async function* partRecords(part: FileSlice): AsyncGenerator<Uint8Array> {
  if (part.size === 0) return;
  let pending = new Uint8Array(0);
  for await (const chunk of createReadStream(part.path, { start: part.offset, end: part.offset + part.size - 1 })) {
    const joined = new Uint8Array(pending.length + (chunk as Buffer).length);
    joined.set(pending);
    joined.set(chunk as Buffer, pending.length);
    let at = 0;
    for (;;) {
      if (joined.length - at < 4) break;
      const length = new DataView(joined.buffer, joined.byteOffset + at).getUint32(0, true);
      if (joined.length - at - 4 < length) break;
      yield joined.subarray(at + 4, at + 4 + length);
      at += 4 + length;
    }
    pending = joined.slice(at);
  }
  if (pending.length > 0) throw new InvalidArchive('a shard part ends inside a point record');
}

function describe(id: PointId): string {
  return String(id);
}

/** Decodes and vets each record against the shard it is restored into. */
async function* vetted(part: FileSlice, spec: ShardSpec, route: ShardRoute): AsyncGenerator<PointRecord> {
  const sizes = new Map(spec.vectors.map((v) => [v.name, v.size]));
  const multi = new Set(spec.vectors.filter((v) => v.multivector).map((v) => v.name));
  const sparse = new Set(spec.sparseVectors.map((v) => v.name));
  for await (const bytes of partRecords(part)) {
    let record: PointRecord;
    try {
      record = decodePoint(bytes);
    } catch {
      throw new InvalidArchive('a point record does not decode');
    }
    for (const [name, vector] of Object.entries(record.vectors)) {
      if (isSparse(vector)) {
        if (!sparse.has(name)) throw new InvalidArchive(`point ${describe(record.id)} has sparse vector "${name}", which the collection does not define`);
        continue;
      }
      const size = sizes.get(name);
      if (size === undefined) throw new InvalidArchive(`point ${describe(record.id)} has vector "${name}", which the collection does not define`);
      if (isMulti(vector) !== multi.has(name)) throw new InvalidArchive(`point ${describe(record.id)} has a ${isMulti(vector) ? 'multivector' : 'single vector'} "${name}", the collection expects ${multi.has(name) ? 'a multivector' : 'a single vector'}`);
      const dim = isMulti(vector) ? vector.dim : vector.length;
      if (dim !== size) throw new InvalidArchive(`point ${describe(record.id)} has a ${dim}-d vector "${name}", the collection expects ${size}`);
    }
    if (shardOf(record.id, route.count) !== route.index) {
      throw new InvalidArchive(`point ${describe(record.id)} belongs to shard ${shardOf(record.id, route.count)}, not shard ${route.index}`);
    }
    yield record;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

/**
 * Builds the store a part describes in a directory beside `spec.path`. Every record is decoded and
 * checked here, so a bad part fails before the live shard is touched; the partial store is removed.
 */
export async function stageShardStore(spec: ShardSpec, part: FileSlice, lastOp: number, route: ShardRoute): Promise<string> {
  const staged = `${spec.path}${STAGED}${randomUUID()}`;
  try {
    await Shard.createStore(staged, vetted(part, spec, route), lastOp);
    return staged;
  } catch (err) {
    await rm(staged, { recursive: true, force: true });
    throw err;
  }
}

/** The shard open after a swap, and why the swap failed if it did (the previous store is then back). */
export interface SwapOutcome {
  shard: Shard | null;
  failure: unknown;
}

/**
 * Puts a staged store in place of the shard's directory (the live shard must be closed) and opens
 * it. If the new store does not open, the previous directory is put back and opened instead.
 */
export async function swapShardStore(staged: string, spec: ShardSpec): Promise<SwapOutcome> {
  const previous = `${spec.path}${REPLACED}${randomUUID()}`;
  const hadPrevious = await exists(spec.path);
  if (hadPrevious) await rename(spec.path, previous);
  await rename(staged, spec.path);
  try {
    const shard = await Shard.open(spec);
    if (hadPrevious) await rm(previous, { recursive: true, force: true });
    return { shard, failure: null };
  } catch (failure) {
    await rm(spec.path, { recursive: true, force: true });
    if (!hadPrevious) return { shard: null, failure };
    await rename(previous, spec.path);
    return { shard: await Shard.open(spec), failure };
  }
}

/**
 * Finishes what a crash interrupted in a swap of the shard at `path`, before the shard opens:
 * if the shard's directory is missing while a replaced one exists, the crash fell between
 * moving the old store away and putting the new one (or the old one) back, and the recovery was
 * never acknowledged, so the old store returns. Leftover staged and replaced directories go.
 */
export async function settleShardDirectory(path: string): Promise<void> {
  const siblings = await readdir(dirname(path)).catch(() => [] as string[]);
  const own = basename(path);
  const replaced = siblings.filter((name) => name.startsWith(own + REPLACED)).map((name) => join(dirname(path), name));
  const staged = siblings.filter((name) => name.startsWith(own + STAGED)).map((name) => join(dirname(path), name));
  if (replaced.length > 0 && !(await exists(path))) await rename(replaced.shift()!, path);
  await Promise.all([...replaced, ...staged].map((dir) => rm(dir, { recursive: true, force: true })));
}
