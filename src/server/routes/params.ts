// Path and query parameters shared by the route modules.

import type { FastifyRequest } from 'fastify';
import { BadInput } from '../../errors.js';
import { formatJsonPath, parseJsonPath } from '../../shard/filter/index.js';
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

/** Conditions find indexes by the canonical form of a key ("a"."b" and a.b are one key). */
export function canonicalKey(key: string): string {
  const path = parseJsonPath(key);
  if (!path) throw new BadInput(`Invalid payload key: ${key}`);
  return formatJsonPath(path);
}
