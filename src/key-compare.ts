// API keys as configured and compared: shared by the REST authentication and the peer-to-peer
// routes, which check the same key. The comparison takes the same time whatever the bytes, so
// a key cannot be guessed from how fast it is refused.

import { timingSafeEqual } from 'node:crypto';

/** Qdrant's answer to a key that is not the node's. */
export const INVALID_KEY = 'Invalid API key or JWT';

/** A configured key; Qdrant treats an empty one as unset. */
export function keyOf(value: string | null): Buffer | null {
  return value === null || value === '' ? null : Buffer.from(value);
}

export function sameKey(expected: Buffer | null, presented: Buffer): boolean {
  return expected !== null && expected.length === presented.length && timingSafeEqual(expected, presented);
}
