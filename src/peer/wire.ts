// What peers send each other on the p2p routes, and how it is encoded: V8's serialisation (the
// format `postMessage` uses), so tasks and results cross between peers exactly as they cross to a
// shard worker: typed arrays stay typed arrays, ids past 2^53 stay bigints, Maps stay Maps, an
// absent part stays absent. Errors cross as the worker transport's WireError (src/errors.ts), so a
// Quiver error raised on the remote peer is raised again on the sender with its kind, status and
// exact message. The format belongs to the Node major both peers run (risk R8 of the cluster
// plan): every request names the sender's, and a receiver running another refuses it.

import { deserialize, serialize } from 'node:v8';
import { BadRequest, isQuiverError, QuiverError, ServiceError, toWire, type WireError } from '../errors.js';
import type { DeadlineBudget } from '../shard/deadline.js';
import type { ReplicaTask } from '../replica/replica.js';

export const CONTENT_TYPE = 'application/octet-stream';
/** The control-plane revision the sender had applied when it sent the request. */
export const REVISION_HEADER = 'x-quiver-revision';
/** The sender's peer id (a transfer's receiver takes updates from its transfer's source only). */
export const PEER_HEADER = 'x-quiver-peer';
/** The sender's wire format (WIRE_FORMAT). */
export const WIRE_FORMAT_HEADER = 'x-quiver-wire';
/** V8's serialisation is only promised to read back in the Node major that wrote it. */
export const WIRE_FORMAT = `node-${process.versions.node.split('.')[0]}`;

/** A point update as one replica applies it: logged under the clock tag the sender gave it. */
export type ReplicaUpdate = Extract<ReplicaTask, { type: 'apply' }>;

/** Body of `/run`: one task for the receiver's replica, with the time its request has left. */
export interface RunRequest {
  task: ReplicaTask;
  deadline: DeadlineBudget | null;
}

/** A result, or the error that took its place. */
export type Answer<T> = { ok: T } | { error: WireError };

/** Answer of `/apply`: one per update of the batch, in the batch's order. */
export interface ApplyAnswer {
  replies: Answer<null>[];
}

/**
 * The receiver cannot serve the request although the request may be fine: it holds no such
 * replica (yet, or any more), the replica takes no updates, or it has not caught up with the
 * sender's revision. A replica failure (5xx) to the replica set, which asks another replica.
 */
export class ReplicaUnavailable extends QuiverError {
  // Qdrant answers a service error (its "Service internal error" prefix) with 500.
  readonly statusCode = 500;
  readonly kind = 'ServiceError';
  constructor(description: string) {
    super(`Service internal error: ${description}`);
  }
}

/** A request whose wire format this peer cannot read. */
export function wireFormatMismatch(sent: string | undefined): BadRequest {
  return new BadRequest(`peer sent wire format ${sent ?? '(none)'}, this peer reads ${WIRE_FORMAT}: every peer must run the same Node major`);
}

export function encode(value: unknown): Buffer {
  return serialize(value);
}

export function decode<T>(bytes: Uint8Array): T {
  return deserialize(bytes) as T;
}

/**
 * Several encoded values in one body, each after its length (u32 little-endian): a batch of
 * updates is encoded update by update as the updates are queued, so the sender knows a batch's
 * size before it sends it.
 */
export function encodeFrames(frames: readonly Uint8Array[]): Buffer {
  const head = Buffer.alloc(4 * frames.length);
  const parts: Uint8Array[] = [];
  frames.forEach((frame, i) => {
    head.writeUInt32LE(frame.length, 4 * i);
    parts.push(head.subarray(4 * i, 4 * i + 4), frame);
  });
  return Buffer.concat(parts);
}

export function decodeFrames(body: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    if (at + 4 > body.length) throw new BadRequest('truncated frame header in a p2p batch');
    const length = body.readUInt32LE(at);
    if (at + 4 + length > body.length) throw new BadRequest('truncated frame in a p2p batch');
    frames.push(body.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return frames;
}

/** `err` as it crosses: a Quiver error as it is, anything else as the service error it is to the sender. */
export function wireErrorOf(err: unknown): WireError {
  if (isQuiverError(err)) return toWire(err);
  return toWire(new ServiceError(err instanceof Error ? err.message : String(err)));
}

/** The route of `action` for a shard (the collection name percent-encoded: it may hold any character). */
export function shardRoute(collection: string, shard: number, action: 'run' | 'apply' | 'forward'): string {
  return `/p2p/shards/${encodeURIComponent(collection)}/${shard}/${action}`;
}
