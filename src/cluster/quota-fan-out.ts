// `GET /quotas` in a cluster: each peer's own usage and whether it refuses updates, asked of every
// registered peer over the p2p port and listed for those that answered (a peer that cannot be
// reached is left out, as Qdrant leaves it out), the serving peer included.

import type { FastifyInstance } from 'fastify';
import type { P2pClient } from '../peer/p2p-client.js';
import type { QuotaGuard, QuotaUsage } from '../quota/guard.js';
import type { PeerInfo } from './keys.js';

/** Qdrant's PeerQuotaUsage: `exceeded` is false while the quota is disabled. */
export interface PeerQuotaUsage extends QuotaUsage {
  exceeded: boolean;
}

const ROUTE = '/p2p/quota-usage';
/** A peer that takes longer is left out of the answer rather than holding it up. */
const ASK_TIMEOUT_MS = 2_000;

export function peerQuotaUsage(quota: QuotaGuard): PeerQuotaUsage {
  const exceeded = quota.exceeded();
  return { exceeded: exceeded.resident_memory === true || exceeded.disk_usage === true, ...quota.usage() };
}

/** The p2p route that answers this peer's usage. */
export function quotaUsageRoute(quota: QuotaGuard) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get(ROUTE, async () => peerQuotaUsage(quota));
  };
}

/** Every answering peer's usage by peer id; this peer's is read locally. */
export async function quotaPeers(self: number, quota: QuotaGuard, peers: ReadonlyMap<number, PeerInfo>, client: P2pClient): Promise<Record<string, PeerQuotaUsage>> {
  const answers = await Promise.all([...peers].map(async ([id, peer]): Promise<[number, PeerQuotaUsage | null]> => {
    if (id === self) return [id, peerQuotaUsage(quota)];
    try {
      const answer = await client.send(peer.uri, { method: 'GET', path: ROUTE, timeoutMs: ASK_TIMEOUT_MS });
      return [id, answer.statusCode === 200 ? (JSON.parse(answer.body.toString('utf8')) as PeerQuotaUsage) : null];
    } catch {
      return [id, null];
    }
  }));
  return Object.fromEntries(answers.filter((a): a is [number, PeerQuotaUsage] => a[1] !== null).map(([id, usage]) => [String(id), usage]));
}
