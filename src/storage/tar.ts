// The subset of the tar format snapshots use: regular files only, in ustar headers (sizes past
// the 11 octal digits use the base-256 form GNU tar and Qdrant's tar crate read). The writer streams
// entries into a file; the reader indexes an archive (or an archive embedded in another one) and
// refuses anything damaged: a bad header checksum, an entry running past the end, a missing
// end-of-archive marker.

import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { BadRequest } from '../errors.js';

const BLOCK = 512;
const MAX_OCTAL_SIZE = 8 ** 11 - 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A byte range of a file: a whole archive, or one entry of it. */
export interface FileSlice {
  path: string;
  offset: number;
  size: number;
}

export interface TarEntry extends FileSlice {
  name: string;
}

export class InvalidArchive extends BadRequest {
  constructor(reason: string) {
    super(`Invalid snapshot archive: ${reason}`);
  }
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function writeOctal(header: Uint8Array, at: number, width: number, value: number): void {
  header.set(encoder.encode(value.toString(8).padStart(width - 1, '0') + '\0'), at);
}

function header(name: string, size: number, mtime: number): Uint8Array {
  const bytes = encoder.encode(name);
  if (bytes.length > 100) throw new Error(`tar entry name too long: ${name}`);
  const h = new Uint8Array(BLOCK);
  h.set(bytes, 0);
  writeOctal(h, 100, 8, 0o644);
  writeOctal(h, 108, 8, 0);
  writeOctal(h, 116, 8, 0);
  if (size <= MAX_OCTAL_SIZE) {
    writeOctal(h, 124, 12, size);
  } else {
    h[124] = 0x80;
    let rest = BigInt(size);
    for (let i = 135; i > 124; i--, rest >>= 8n) h[i] = Number(rest & 0xffn);
  }
  writeOctal(h, 136, 12, Math.floor(mtime / 1000));
  h.fill(0x20, 148, 156); // the checksum field counts as spaces while summing
  h[156] = 0x30; // '0': regular file
  h.set(encoder.encode('ustar\0' + '00'), 257);
  const sum = h.reduce((a, b) => a + b, 0);
  h.set(encoder.encode(sum.toString(8).padStart(6, '0') + '\0 '), 148);
  return h;
}

/** Streams entries into a new archive file; `finish` writes the end marker and syncs it to disk. */
export class TarWriter {
  private position = 0;

  private constructor(private readonly file: FileHandle, private readonly mtime: number) {}

  static async create(path: string): Promise<TarWriter> {
    return new TarWriter(await open(path, 'wx'), Date.now());
  }

  private async write(bytes: Uint8Array): Promise<void> {
    await this.file.write(bytes, 0, bytes.length, this.position);
    this.position += bytes.length;
  }

  async addBytes(name: string, data: Uint8Array): Promise<void> {
    await this.write(header(name, data.length, this.mtime));
    await this.write(data);
    await this.write(new Uint8Array(padding(data.length)));
  }

  /** Copies a whole file (or a slice of one) in as entry `name`, without holding it in memory. */
  async addFile(name: string, source: FileSlice): Promise<void> {
    await this.write(header(name, source.size, this.mtime));
    if (source.size > 0) {
      for await (const chunk of createReadStream(source.path, { start: source.offset, end: source.offset + source.size - 1 })) {
        await this.write(chunk as Buffer);
      }
    }
    await this.write(new Uint8Array(padding(source.size)));
  }

  async finish(): Promise<number> {
    await this.write(new Uint8Array(2 * BLOCK));
    await this.file.sync();
    await this.file.close();
    return this.position;
  }

  async abandon(): Promise<void> {
    await this.file.close();
  }
}

function readField(h: Uint8Array, at: number, width: number): string {
  const field = h.subarray(at, at + width);
  const end = field.indexOf(0);
  return decoder.decode(end < 0 ? field : field.subarray(0, end));
}

function readSize(h: Uint8Array): number {
  if (h[124] & 0x80) {
    let value = 0n;
    for (let i = 125; i < 136; i++) value = (value << 8n) | BigInt(h[i]);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new InvalidArchive('entry size out of range');
    return Number(value);
  }
  const text = readField(h, 124, 12).trim();
  if (!/^[0-7]+$/.test(text)) throw new InvalidArchive('bad entry size field');
  return parseInt(text, 8);
}

function checksumMatches(h: Uint8Array): boolean {
  const stored = readField(h, 148, 8).trim();
  if (!/^[0-7]+$/.test(stored)) return false;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  return sum === parseInt(stored, 8);
}

/** Lists the regular files of the archive held in `archive`, checking that the whole archive is present. */
export async function readTar(archive: FileSlice): Promise<TarEntry[]> {
  const file = await open(archive.path, 'r');
  try {
    const entries: TarEntry[] = [];
    const h = new Uint8Array(BLOCK);
    let at = 0;
    for (;;) {
      if (at + BLOCK > archive.size) throw new InvalidArchive(entries.length === 0 && archive.size === 0 ? 'empty file' : 'truncated (no end-of-archive marker)');
      const { bytesRead } = await file.read(h, 0, BLOCK, archive.offset + at);
      if (bytesRead < BLOCK) throw new InvalidArchive('truncated header');
      if (h.every((b) => b === 0)) return entries;
      if (!checksumMatches(h)) throw new InvalidArchive(`bad header checksum at byte ${at}`);
      const size = readSize(h);
      const type = h[156];
      const prefix = readField(h, 345, 155);
      const name = (prefix ? prefix + '/' : '') + readField(h, 0, 100);
      const dataAt = at + BLOCK;
      if (dataAt + size > archive.size) throw new InvalidArchive(`entry ${name} is truncated`);
      // Directories and extended headers carry nothing snapshots need; only files are listed.
      if (type === 0x30 || type === 0) entries.push({ name, path: archive.path, offset: archive.offset + dataAt, size });
      at = dataAt + size + padding(size);
    }
  } finally {
    await file.close();
  }
}

/** The bytes of an entry (for the small ones: manifests). */
export async function readEntry(entry: FileSlice): Promise<Uint8Array> {
  const file = await open(entry.path, 'r');
  try {
    const bytes = new Uint8Array(entry.size);
    const { bytesRead } = await file.read(bytes, 0, entry.size, entry.offset);
    if (bytesRead !== entry.size) throw new InvalidArchive('truncated entry');
    return bytes;
  } finally {
    await file.close();
  }
}
