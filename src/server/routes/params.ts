// Path and query parameters shared by the route modules.

import type { FastifyRequest } from 'fastify';
import { validateQuery, type COMMIT_PARAMS, type READ_PARAMS, type WRITE_PARAMS } from '../../api/validator.js';
import type { ParsedQuery, QueryParamSet, RawQuery } from '../../api/schemas/query.js';

export type Params = { name: string; id?: string; field?: string };

export function collectionName(request: FastifyRequest): string {
  return (request.params as Params).name;
}

export function query<S extends QueryParamSet>(request: FastifyRequest, set: S): ParsedQuery<S> {
  return validateQuery(set, request.query as RawQuery);
}

export type WriteQuery = ParsedQuery<typeof WRITE_PARAMS>;
export type ReadQuery = ParsedQuery<typeof READ_PARAMS>;
export type CommitQuery = ParsedQuery<typeof COMMIT_PARAMS>;
