// What a credential grants, and the checks of an operation's requirement against it, with
// Qdrant's 403 messages. A grant is either node-wide (`r` read, `m` manage) or a list of
// collections, each with `r` (read), `rw` (read and write) or `prw` (points read and write: no
// snapshots, payload indexes or other collection extras).

import { Forbidden } from '../../errors.js';
import { FULL_ACCESS, type RequestAccess } from '../access.js';

export type GlobalMode = 'r' | 'm';
export type CollectionMode = 'r' | 'rw' | 'prw';

export type Grant =
  | { readonly global: GlobalMode }
  | { readonly collections: ReadonlyMap<string, CollectionMode> };

/** What an operation needs beyond reading; an empty requirement is read access. */
export interface Requirement {
  /** Changes points or the collection. */
  readonly write?: boolean;
  /** Needs node-wide manage access. */
  readonly manage?: boolean;
  /** Touches collection extras (snapshots, payload indexes, cluster info) that `prw` excludes. */
  readonly extras?: boolean;
}

export const FULL_GRANT: Grant = { global: 'm' };
export const READ_ONLY_GRANT: Grant = { global: 'r' };

function checkGlobalMode(mode: GlobalMode, need: Requirement): void {
  if ((need.write || need.manage) && mode === 'r') throw new Forbidden('Global manage access is required');
}

/** A node-wide operation: collection-scoped grants never pass. */
export function checkGlobal(grant: Grant, need: Requirement): void {
  if ('collections' in grant) throw new Forbidden('Global access is required');
  checkGlobalMode(grant.global, need);
}

/**
 * An operation on one collection, named as the request names it (`name`) and, when that is an
 * alias, by the collection it points to (`target`): an entry for either one grants access.
 */
export function checkCollection(grant: Grant, name: string, target: string | undefined, need: Requirement): void {
  if ('global' in grant) return checkGlobalMode(grant.global, need);
  const mode = grant.collections.get(name) ?? (target === undefined ? undefined : grant.collections.get(target));
  if (mode === undefined) throw new Forbidden(`Access to collection ${name} is required`);
  if (need.extras && mode === 'prw') throw new Forbidden(`Only points access is allowed for collection ${name}`);
  if (need.write && mode === 'r') throw new Forbidden(`Write access to collection ${name} is required`);
  // Manage access exists only node-wide, whatever the collection entry says.
  if (need.manage) throw new Forbidden('Manage access for this operation is required');
}

/** Listings show a collection-scoped caller only what its grant names, directly or through an alias. */
export function requestAccess(grant: Grant, targetOf: (name: string) => string | undefined): RequestAccess {
  if ('global' in grant) return FULL_ACCESS;
  const listed = grant.collections;
  return {
    nodeWide: false,
    canSee: (name) => {
      if (listed.has(name)) return true;
      const target = targetOf(name);
      return target !== undefined && listed.has(target);
    },
  };
}
