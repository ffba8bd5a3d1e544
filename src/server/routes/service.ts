// GET / : what this server is.

import type { FastifyInstance } from 'fastify';
import { COMMIT, TITLE, VERSION } from '../../version.js';
import type { ServerContext } from '../app.js';

export function registerServiceRoutes(app: FastifyInstance, _context: ServerContext): void {
  app.get('/', async () => ({ title: TITLE, version: VERSION, commit: COMMIT }));
}
