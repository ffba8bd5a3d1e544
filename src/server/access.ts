// What the caller of a request may see. Authentication (src/server/auth/) attaches the caller's
// access to the request; handlers that list node-wide things (collections, aliases, telemetry,
// metrics, snapshots) filter through it so a collection-scoped key never learns of other
// collections.

import type { FastifyRequest } from 'fastify';

export interface RequestAccess {
  /** Whether the caller may know that this collection exists. */
  canSee(collection: string): boolean;
  /** Whether the caller holds a node-wide grant: node-wide figures (cluster, requests, memory, quota, issues) are for it only. */
  readonly nodeWide: boolean;
}

/** Access of a node without keys, or of a key valid for the whole node. */
export const FULL_ACCESS: RequestAccess = { canSee: () => true, nodeWide: true };

const access = Symbol('access');

declare module 'fastify' {
  interface FastifyRequest {
    [access]?: RequestAccess;
  }
}

export function setAccess(request: FastifyRequest, granted: RequestAccess): void {
  request[access] = granted;
}

export function accessOf(request: FastifyRequest): RequestAccess {
  return request[access] ?? FULL_ACCESS;
}
