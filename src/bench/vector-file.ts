// Vectors from a user's file: .fvecs (each vector an int32 dimension then that many float32, as
// the TEXMEX corpus ships them), .npy (a 2-D little-endian float32/float64 array, C order) or
// .json (an array of equal-length number arrays).

import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { CommandError } from '../errors.js';

export interface VectorTable {
  dim: number;
  /** Row-major, `rows * dim` values. */
  data: Float32Array;
}

export async function readVectorFile(path: string): Promise<VectorTable> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new CommandError(`data set file not found: ${path}`);
    throw err;
  }
  const ext = extname(path).toLowerCase();
  const table = ext === '.fvecs' ? fvecs(bytes, path) : ext === '.npy' ? npy(bytes, path) : ext === '.json' ? json(bytes, path) : null;
  if (!table) throw new CommandError(`${path}: unknown vector file type "${ext}" (use .fvecs, .npy or .json)`);
  if (table.dim < 1 || table.data.length === 0) throw new CommandError(`${path}: holds no vectors`);
  return table;
}

function fvecs(bytes: Buffer, path: string): VectorTable {
  if (bytes.length < 4) throw new CommandError(`${path}: too short for .fvecs`);
  const dim = bytes.readInt32LE(0);
  const stride = 4 + 4 * dim;
  if (dim < 1 || bytes.length % stride !== 0) throw new CommandError(`${path}: not an .fvecs file of equal dimensions (first dimension ${dim}, ${bytes.length} bytes)`);
  const rows = bytes.length / stride;
  const data = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    if (bytes.readInt32LE(r * stride) !== dim) throw new CommandError(`${path}: vector ${r} has dimension ${bytes.readInt32LE(r * stride)}, expected ${dim}`);
    for (let j = 0; j < dim; j++) data[r * dim + j] = bytes.readFloatLE(r * stride + 4 + 4 * j);
  }
  return { dim, data };
}

function npy(bytes: Buffer, path: string): VectorTable {
  // Magic "\x93NUMPY", major, minor, header length (u16 in v1, u32 in v2+), then a Python dict literal.
  if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new CommandError(`${path}: not a .npy file`);
  const major = bytes[6];
  const headerLen = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (!shape || shape.length !== 2 || fortran || (descr !== '<f4' && descr !== '<f8')) {
    throw new CommandError(`${path}: expected a 2-D C-order float32 or float64 array, found descr ${descr}, shape (${shape?.join(', ')}), fortran_order ${fortran}`);
  }
  const [rows, dim] = shape;
  const body = bytes.subarray(start + headerLen);
  const width = descr === '<f4' ? 4 : 8;
  if (body.length < rows * dim * width) throw new CommandError(`${path}: truncated (${body.length} bytes of data for shape (${rows}, ${dim}))`);
  const data = new Float32Array(rows * dim);
  for (let i = 0; i < data.length; i++) data[i] = width === 4 ? body.readFloatLE(i * 4) : body.readDoubleLE(i * 8);
  return { dim, data };
}

function json(bytes: Buffer, path: string): VectorTable {
  let rows: unknown;
  try {
    rows = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new CommandError(`${path}: not JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(rows) || rows.length === 0 || !Array.isArray(rows[0])) throw new CommandError(`${path}: expected a JSON array of number arrays`);
  const dim = (rows[0] as unknown[]).length;
  const data = new Float32Array(rows.length * dim);
  rows.forEach((row: unknown, r) => {
    if (!Array.isArray(row) || row.length !== dim || !row.every((x) => typeof x === 'number')) {
      throw new CommandError(`${path}: row ${r} is not an array of ${dim} numbers`);
    }
    data.set(row as number[], r * dim);
  });
  return { dim, data };
}
