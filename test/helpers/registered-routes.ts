// The routes the Fastify app really registers (method and URL pattern, HEAD left out), read from
// an app built in-process over a throwaway storage and closed again.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CollectionManager } from '../../src/collection/manager.js';
import { defaultConfig } from '../../src/config/config.js';
import { buildServer } from '../../src/server/app.js';
import { StandaloneCluster } from '../../src/server/cluster-service.js';
import { protectedRoutes, type ProtectedRoute } from '../../src/server/auth/hook.js';
import { openNodeState } from '../../src/telemetry/node.js';

export async function registeredRoutes(): Promise<ProtectedRoute[]> {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-routes-'));
  try {
    const config = defaultConfig();
    config.storage.storage_path = storage;
    config.storage.snapshots_path = join(storage, 'snapshots');
    const collections = await CollectionManager.open(storage, 1);
    try {
      const node = await openNodeState(collections.meta, config);
      const app = buildServer({ config, collections, node, cluster: new StandaloneCluster(node.quota, node.peerId, collections) });
      await app.ready();
      const routes = protectedRoutes(app).filter((r) => r.method !== 'HEAD');
      await app.close();
      return routes;
    } finally {
      await collections.close();
    }
  } finally {
    await rm(storage, { recursive: true, force: true });
  }
}
