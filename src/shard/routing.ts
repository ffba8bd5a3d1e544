// Which shard of a collection holds a point: a stable hash of the id, so a point always lands
// on the same shard across restarts and nodes.

import type { PointId } from '../model.js';

/**
 * FNV-1a (32-bit) over the id's text form; numbers and UUID strings never collide in form. A
 * numeric id's text is its exact decimal digits whether it is a number or (past 2^53) a bigint,
 * so placement is the same as it always was for every id a number can hold.
 */
export function shardOf(id: PointId, shardCount: number): number {
  const text = typeof id === 'string' ? `u${id}` : `n${id}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shardCount;
}
