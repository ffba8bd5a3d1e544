// The rules of the name table (collection names and aliases), apart from any store: a single
// node's CollectionManager checks them against its own tables, a cluster's control plane against
// the state read from etcd, so both give Qdrant's answers from the same code.

import { aliasNotFound, collectionAlreadyExists, collectionNameIsAlias, collectionNotFound } from '../messages.js';

export type AliasAction =
  | { create_alias: { collection_name: string; alias_name: string } }
  | { delete_alias: { alias_name: string } }
  | { rename_alias: { old_alias_name: string; new_alias_name: string } };

/** Which collection names exist (a lookup, so a caller can note every name a rule consulted). */
export interface CollectionNames {
  has(name: string): boolean;
}

/** The collection's own name, following an alias; 404 when neither names a collection. */
export function resolveName(nameOrAlias: string, collections: CollectionNames, aliases: ReadonlyMap<string, string>): string {
  if (collections.has(nameOrAlias)) return nameOrAlias;
  const target = aliases.get(nameOrAlias);
  if (target !== undefined && collections.has(target)) return target;
  throw collectionNotFound(nameOrAlias);
}

/** A new collection may take neither an existing collection's name (409) nor an alias's. */
export function checkNewCollectionName(name: string, collections: CollectionNames, aliases: ReadonlyMap<string, string>): void {
  if (collections.has(name)) throw collectionAlreadyExists(name);
  if (aliases.has(name)) throw collectionNameIsAlias(name);
}

/** The alias table after `actions`, applied in order on a copy; the first refused action throws (all or nothing). */
export function applyAliasActions(aliases: ReadonlyMap<string, string>, collections: CollectionNames, actions: readonly AliasAction[]): Map<string, string> {
  const next = new Map(aliases);
  for (const action of actions) {
    if ('create_alias' in action) {
      const { collection_name, alias_name } = action.create_alias;
      if (!collections.has(collection_name)) throw collectionNotFound(collection_name);
      if (collections.has(alias_name)) throw collectionAlreadyExists(alias_name);
      next.set(alias_name, collection_name);
    } else if ('delete_alias' in action) {
      next.delete(action.delete_alias.alias_name);
    } else {
      const { old_alias_name, new_alias_name } = action.rename_alias;
      const target = next.get(old_alias_name);
      if (target === undefined) throw aliasNotFound(old_alias_name);
      // Qdrant does not check this; an alias named like a collection would never be reached.
      if (collections.has(new_alias_name)) throw collectionAlreadyExists(new_alias_name);
      next.delete(old_alias_name);
      next.set(new_alias_name, target);
    }
  }
  return next;
}
