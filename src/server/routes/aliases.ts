// POST /collections/aliases (an atomic list of alias changes) and GET /aliases.

import type { FastifyInstance } from 'fastify';
import { COMMIT_PARAMS, validateBody } from '../../api/validator.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { query } from './params.js';

export function registerAliasRoutes(app: FastifyInstance, { collections }: ServerContext): void {
  app.post('/collections/aliases', async (request) => {
    query(request, COMMIT_PARAMS);
    const body = validateBody('ChangeAliasesOperation', request.body);
    await collections.changeAliases(body.actions);
    return ok(request, true);
  });

  app.get('/aliases', async (request) => ok(request, { aliases: collections.aliasList() }));
}
