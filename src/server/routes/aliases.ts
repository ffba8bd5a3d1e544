// POST /collections/aliases (an atomic list of alias changes) and GET /aliases.

import type { FastifyInstance } from 'fastify';
import { COMMIT_PARAMS, validateBody } from '../../api/validator.js';
import { accessOf } from '../access.js';
import { withCommitTimeout } from '../deadline.js';
import { ok } from '../reply.js';
import type { ServerContext } from '../app.js';
import { query } from './params.js';

export function registerAliasRoutes(app: FastifyInstance, { collections, catalog }: ServerContext): void {
  app.post('/collections/aliases', async (request) => {
    const { timeout } = query(request, COMMIT_PARAMS);
    const body = validateBody('ChangeAliasesOperation', request.body);
    await withCommitTimeout(catalog.changeAliases(body.actions, timeout), timeout);
    return ok(request, true);
  });

  app.get('/aliases', async (request) => {
    const access = accessOf(request);
    return ok(request, { aliases: collections.aliasList().filter(({ alias_name }) => access.canSee(alias_name)) });
  });
}
