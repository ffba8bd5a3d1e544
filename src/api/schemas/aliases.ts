// ChangeAliasesOperation: a list of create, delete and rename actions, applied atomically. The
// name an action gives an alias must be one a collection could have, since aliases and
// collection names are resolved alike.

import type { SchemaObject } from 'ajv';
import { seq, str, struct, untagged, withRule } from './builders.js';

const NEW_ALIAS_NAME = withRule(str(), { newName: 'alias name' });

function action(name: string, key: string, fields: Record<string, SchemaObject>) {
  const body = struct(name, fields, { required: Object.keys(fields) });
  return struct(`${name}Operation`, { [key]: body }, { required: [key] });
}

export const CHANGE_ALIASES = struct(
  'ChangeAliasesOperation',
  {
    actions: seq(
      untagged('AliasOperations', [
        action('CreateAlias', 'create_alias', { collection_name: str(), alias_name: NEW_ALIAS_NAME }),
        action('DeleteAlias', 'delete_alias', { alias_name: str() }),
        action('RenameAlias', 'rename_alias', { old_alias_name: str(), new_alias_name: NEW_ALIAS_NAME }),
      ]),
    ),
  },
  { required: ['actions'] },
);
