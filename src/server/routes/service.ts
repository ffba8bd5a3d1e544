// GET / : what this server is.

import type { FastifyInstance } from 'fastify';
import { buildCommit } from '../../telemetry/build-commit.js';
import { TITLE, VERSION } from '../../version.js';
import type { ServerContext } from '../app.js';

export function registerServiceRoutes(app: FastifyInstance, _context: ServerContext): void {
  app.get('/', async () => {
    const commit = buildCommit();
    return { title: TITLE, version: VERSION, ...(commit === null ? {} : { commit }) };
  });
}
