// The kinds of access a REST endpoint of Qdrant v1.19 requires (each route's own is in
// src/server/route-catalogue.ts), as Qdrant checks them: node-wide operations need a node-wide
// grant (manage for anything that changes the node, its collections' existence or
// configuration, aliases, shard keys, full snapshots, recovery, quotas, cluster membership);
// operations on one collection need an entry for it (write for point changes, extras for
// snapshots, payload indexes and cluster info, which `prw` excludes). Listings are open to
// every valid key and filtered by what it may see.

import type { Requirement } from './grant.js';

export type AccessRule =
  /** Any valid key; the handler shows only what the caller may see. */
  | { readonly scope: 'any' }
  | { readonly scope: 'global'; readonly need: Requirement }
  | {
      readonly scope: 'collection';
      readonly need: Requirement;
      /** The body may name other collections (`lookup_from`, `with_lookup`), which need access too. */
      readonly bodyCollections?: boolean;
    };

export const READ: Requirement = {};
export const WRITE: Requirement = { write: true };
export const EXTRAS: Requirement = { extras: true };
export const WRITE_EXTRAS: Requirement = { write: true, extras: true };
export const MANAGE: Requirement = { manage: true };

export const ANY: AccessRule = { scope: 'any' };
export const global = (need: Requirement): AccessRule => ({ scope: 'global', need });
export const collection = (need: Requirement): AccessRule => ({ scope: 'collection', need });
export const SEARCH: AccessRule = { scope: 'collection', need: READ, bodyCollections: true };

/** Paths Qdrant serves without a key whatever the method: the root and the health probes. */
export function isExemptPath(path: string): boolean {
  return path === '/' || path === '/healthz' || path.startsWith('/readyz') || path.startsWith('/livez');
}
