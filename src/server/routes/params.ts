// Path and query parameters shared by the route modules.

import type { FastifyRequest } from 'fastify';
import { invalidJsonPath, type RequestPart } from '../../api/messages.js';
import { formatJsonPath, parseJsonPath } from '../../shard/filter/index.js';
import { READ_PARAMS, WRITE_PARAMS, validateQuery, type COMMIT_PARAMS } from '../../api/validator.js';
import { withReadScope, withWriteScope } from '../../replica/request-scope.js';
import type { Collection } from '../../collection/collection.js';
import type { StrictRead } from '../../collection/strict-reads.js';
import type { ParsedQuery, QueryParamSet, RawQuery } from '../../api/schemas/query.js';

export type Params = { name: string; id?: string; field?: string; vector?: string };

export function collectionName(request: FastifyRequest): string {
  return (request.params as Params).name;
}

/**
 * The typed values of the route's query parameters. Every route's parameters were already
 * checked before its handler ran (src/server/query-params.ts), so this only reads them.
 */
export function query<S extends QueryParamSet>(request: FastifyRequest, set: S): ParsedQuery<S> {
  return validateQuery(set, request.query as RawQuery);
}

/**
 * Runs a read handler under the request's `timeout` (seconds) and read `consistency`: past the
 * timeout the answer is Qdrant's timeout error, and the shard tasks still running for the
 * request stop; the consistency says how many replicas of each shard must answer.
 */
export function read<T>(request: FastifyRequest, operation: string, handler: () => Promise<T>): Promise<T> {
  const { timeout, consistency } = query(request, READ_PARAMS);
  return withReadScope({ timeout, consistency }, operation, handler);
}

/** Runs a point-write handler under the request's write `ordering` (which replica leads the update). */
export function ordered<T>(request: FastifyRequest, handler: () => Promise<T>): Promise<T> {
  return withWriteScope(query(request, WRITE_PARAMS).ordering, handler);
}

/** Strict mode's admission of a read on `collection` (src/collection/strict-mode.ts), under the request's `timeout`. */
export function admitRead(collection: Collection, request: FastifyRequest, read: StrictRead): void {
  collection.admitRead(read, query(request, READ_PARAMS).timeout ?? null);
}

export type WriteQuery = ParsedQuery<typeof WRITE_PARAMS>;
export type ReadQuery = ParsedQuery<typeof READ_PARAMS>;
export type CommitQuery = ParsedQuery<typeof COMMIT_PARAMS>;

/**
 * Conditions find indexes by the canonical form of a key ("a"."b" and a.b are one key). A key
 * Qdrant reads as a JsonPath fails to deserialize when it does not parse; body keys were already
 * checked by the body schema, so only a path parameter can fail here.
 */
export function canonicalKey(key: string, part: RequestPart = 'JSON body'): string {
  const path = parseJsonPath(key);
  if (!path) throw invalidJsonPath(key, part);
  return formatJsonPath(path);
}
