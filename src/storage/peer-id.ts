// This node's peer id: drawn once (or taken from `cluster.peer_id`) and kept in node metadata, so
// telemetry, cluster info and quotas name the same peer across restarts. As in Qdrant, whose
// consensus state takes `cluster.peer_id` only when it is first created, a stored id wins.

import { randomBytes } from 'node:crypto';
import type { MetaStore } from './meta-store.js';

const KEY = 'peer_id';

/** Qdrant draws a random u64; Quiver keeps it below 2^53 so it survives JSON as a number. */
function drawPeerId(): number {
  return Number(randomBytes(8).readBigUInt64BE() % BigInt(Number.MAX_SAFE_INTEGER)) + 1;
}

export async function loadPeerId(meta: MetaStore<unknown>, configured: number | null): Promise<number> {
  const stored = await meta.nodeSetting<number>(KEY);
  if (stored !== undefined) return stored;
  const id = configured ?? drawPeerId();
  await meta.putNodeSetting(KEY, id);
  return id;
}
