// Shutdown within a bound (Quiver's `service.shutdown_timeout_sec`): the server stops accepting
// connections, in-flight requests finish, and every collection closes once the writes queued on
// it are done. Past the bound, the connections still open are cut and the shard workers are
// terminated (a stuck task cannot hold the node up); each worker closes its stores as it exits.

import type { FastifyInstance } from 'fastify';
import type { CollectionManager } from '../collection/manager.js';

/** How the shutdown went: everything finished, or the bound passed and the rest was cut short. */
export type ShutdownOutcome = 'graceful' | 'forced';

/** A cluster peer's own parts (p2p server, lease, apply loop, etcd member): stopped after the REST server, before the collections. */
export interface StoppablePeer {
  stop(): Promise<void>;
}

export async function shutDown(app: FastifyInstance, collections: CollectionManager, seconds: number, peer: StoppablePeer | null = null): Promise<ShutdownOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), seconds * 1000);
  });
  const finished = (async () => {
    await app.close();
    await peer?.stop();
    await collections.close();
    return 'finished' as const;
  })();
  const outcome = await Promise.race([finished, expired]).finally(() => clearTimeout(timer));
  if (outcome === 'finished') return 'graceful';
  // The graceful attempt may still settle (a task cut short fails): nobody waits for it now.
  finished.catch(() => undefined);
  app.server.closeAllConnections();
  // The peer's etcd member dies with this process anyway (its parent-death signal); this stops it cleanly.
  await peer?.stop();
  await collections.terminate();
  return 'forced';
}
