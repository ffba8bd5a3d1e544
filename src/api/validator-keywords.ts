// Quiver's Ajv keywords, one list for every Ajv instance that compiles the request schemas: the
// one that compiles them at run time (source-mode fallback, see compiled-validators.ts) and the one
// that writes them out as standalone code at build time (validator-code.ts). Their functions are
// reached from generated code by keyword name (KEYWORD_FUNCTIONS), so the generated module holds
// none of this code and needs no path to it.

import type { ErrorObject, FuncKeywordDefinition, KeywordDefinition } from 'ajv';
import { parseDatetime } from '../shard/filter/datetime.js';
import { parseJsonPath } from '../shard/filter/json-path.js';
import { EXACT_INTEGERS_KEYWORD, I64_KEYWORD } from './exact-integer-keywords.js';
import type { RuleBreach } from './messages.js';
import { POINT_ID_KEYWORD } from './point-id-keyword.js';
import type { PathStep, PlacedRule } from './schemas/derive.js';
import { violation } from './schemas/rules.js';

// Rules never fail validation: each broken one is noted here (Ajv runs synchronously, so one
// list serves every call) and all are reported together, as the validator crate does.
let breaches: RuleBreach[] = [];

/** Starts a rules pass: forgets the breaches of the previous one. */
export function startRules(): void {
  breaches = [];
}

/** The rules broken since startRules(), in the order they were checked. */
export function brokenRules(): readonly RuleBreach[] {
  return breaches;
}

// serde's aliases: a field sent under another of its names is moved to its own name before the
// struct is checked (so `required` and the field's schema see it); both names at once are one
// field given twice.
function renameAliases(aliases: Record<string, string>, data: Record<string, unknown>, _parent?: unknown, cxt?: { instancePath: string }): boolean {
  for (const [alias, field] of Object.entries(aliases)) {
    if (!Object.hasOwn(data, alias)) continue;
    if (Object.hasOwn(data, field)) {
      renameAliases.errors = [{ keyword: 'aliases', instancePath: cxt?.instancePath ?? '', schemaPath: '', params: { field } }];
      return false;
    }
    data[field] = data[alias];
    delete data[alias];
  }
  return true;
}
renameAliases.errors = undefined as Partial<ErrorObject>[] | undefined;

/** Every item of a list (known to be one) is a number; the first that is not is reported as serde reports it. */
function f32Items(_: boolean, data: unknown[], _parent?: unknown, cxt?: { instancePath: string }): boolean {
  for (let i = 0; i < data.length; i++) {
    if (typeof data[i] !== 'number') {
      f32Items.errors = [{ keyword: 'f32Items', instancePath: `${cxt?.instancePath ?? ''}/${i}`, schemaPath: '', params: { item: data[i] } }];
      return false;
    }
  }
  return true;
}
f32Items.errors = undefined as Partial<ErrorObject>[] | undefined;

function pointsOrFilter(_: boolean, data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return true;
  const { points, filter } = data as { points?: unknown; filter?: unknown };
  return (points ?? null) !== null || (filter ?? null) !== null;
}

function checkRule(rule: PlacedRule, data: unknown, _parent?: unknown, cxt?: { instancePath: string; rootData: unknown }): boolean {
  const message = violation(rule, data);
  if (message !== null) breaches.push({ path: qdrantPath(rule, cxt?.instancePath ?? '', cxt?.rootData), message });
  return true;
}

// Qdrant's field paths (actix-web-validator's flatten_errors): fields joined by dots, list
// items as [i], map entries as "?" (Qdrant validates map values as an anonymous list).
// A rule of a referenced schema (a nested prefetch) has its steps from that schema's root; the
// steps before it, through nested prefetches, are fields and list items, told apart by the data.
function qdrantPath(rule: PlacedRule, instancePath: string, root: unknown): string {
  const segments = instancePath.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const lead = segments.length - rule.path.length;
  let path = '';
  let node = root;
  for (const segment of segments.slice(0, lead)) {
    path += Array.isArray(node) ? `[${segment}]` : (path ? '.' : '') + segment;
    node = (node as Record<string, unknown>)[segment];
  }
  rule.path.forEach((step: PathStep, i) => {
    if (step === 'index') path += `[${segments[lead + i]}]`;
    else path += (path ? '.' : '') + (step === 'key' ? '?' : segments[lead + i]);
  });
  if (rule.field) path += (path ? '.' : '') + rule.field;
  return path;
}

/** Every keyword the request schemas use beyond JSON Schema's own. */
export const VALIDATOR_KEYWORDS: readonly KeywordDefinition[] = [
  { keyword: 'serde', schemaType: 'string' },
  { keyword: 'untagged', schemaType: 'string' },
  // serde's `expecting` text of an untagged enum, reported instead of the generic one.
  { keyword: 'expecting', schemaType: 'string' },
  POINT_ID_KEYWORD,
  EXACT_INTEGERS_KEYWORD,
  I64_KEYWORD,
  { keyword: 'f32Items', schemaType: 'boolean', type: 'array', errors: true, validate: f32Items },
  // A JsonPath or a datetime is a string that must parse; JsonPath's deserializer reports its own message.
  { keyword: 'jsonPath', schemaType: 'boolean', type: 'string', validate: (_: boolean, data: string) => parseJsonPath(data) !== undefined },
  { keyword: 'datetime', schemaType: 'boolean', type: 'string', validate: (_: boolean, data: string) => parseDatetime(data) !== undefined },
  { keyword: 'pointsOrFilter', schemaType: 'boolean', validate: pointsOrFilter },
  { keyword: 'aliases', type: 'object', schemaType: 'object', modifying: true, errors: true, before: 'required', validate: renameAliases },
  { keyword: 'rule', schemaType: 'object', validate: checkRule },
];

/** The function of each keyword that has one, by keyword: what generated validators call. */
export type KeywordFunctions = Readonly<Record<string, NonNullable<FuncKeywordDefinition['validate']>>>;

export const KEYWORD_FUNCTIONS: KeywordFunctions = Object.fromEntries(
  VALIDATOR_KEYWORDS.flatMap((def) => ('validate' in def && def.validate ? [[def.keyword as string, def.validate]] : [])),
);
