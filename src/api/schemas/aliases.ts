// ChangeAliasesOperation: a list of create, delete and rename actions, applied atomically.

import { seq, str, struct, untagged } from './builders.js';

function action(name: string, key: string, fields: string[]) {
  const body = struct(
    name,
    Object.fromEntries(fields.map((field) => [field, str()])),
    { required: fields },
  );
  return struct(`${name}Operation`, { [key]: body }, { required: [key] });
}

export const CHANGE_ALIASES = struct(
  'ChangeAliasesOperation',
  {
    actions: seq(
      untagged('AliasOperations', [
        action('CreateAlias', 'create_alias', ['collection_name', 'alias_name']),
        action('DeleteAlias', 'delete_alias', ['alias_name']),
        action('RenameAlias', 'rename_alias', ['old_alias_name', 'new_alias_name']),
      ]),
    ),
  },
  { required: ['actions'] },
);
