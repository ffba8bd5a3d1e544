// Shutdown within a bound (Quiver's `service.shutdown_timeout_sec`): the server stops accepting
// connections, in-flight requests finish, and every collection closes once the writes queued on
// it are done. Past the bound, the connections still open are cut and the shard workers are
// terminated (a stuck task cannot hold the node up); each worker closes its stores as it exits.

import type { FastifyInstance } from 'fastify';
import type { CollectionManager } from '../collection/manager.js';

/** How the shutdown went: everything finished, or the bound passed and the rest was cut short. */
export type ShutdownOutcome = 'graceful' | 'forced';

export async function shutDown(app: FastifyInstance, collections: CollectionManager, seconds: number): Promise<ShutdownOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), seconds * 1000);
  });
  const finished = (async () => {
    await app.close();
    await collections.close();
    return 'finished' as const;
  })();
  const outcome = await Promise.race([finished, expired]).finally(() => clearTimeout(timer));
  if (outcome === 'finished') return 'graceful';
  // The graceful attempt may still settle (a task cut short fails): nobody waits for it now.
  finished.catch(() => undefined);
  app.server.closeAllConnections();
  await collections.terminate();
  return 'forced';
}
