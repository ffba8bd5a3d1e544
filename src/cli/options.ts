// Declarative command-line options: one list per command gives both the parser and the --help
// text, so the two never drift apart.

import { parseArgs } from 'node:util';
import { CommandError } from '../errors.js';

export interface OptionSpec {
  name: string;
  /** Placeholder of the value in help; absent for boolean flags. */
  value?: string;
  default?: string;
  help: string;
}

export interface CommandSpec {
  usage: string;
  summary: string;
  options: OptionSpec[];
  /** Lines after the option list (examples, notes). */
  epilog?: string[];
}

export type ParsedOptions = Record<string, string | boolean | undefined>;

export function helpText(spec: CommandSpec): string {
  const withHelp = [...spec.options, { name: 'help', help: 'show this help' }];
  const left = withHelp.map((o) => `  --${o.name}${o.value ? ` ${o.value}` : ''}`);
  const width = Math.max(...left.map((l) => l.length)) + 2;
  const lines = withHelp.map((o, i) => `${left[i].padEnd(width)}${o.help}${o.default !== undefined ? ` (default: ${o.default})` : ''}`);
  return [`Usage: ${spec.usage}`, '', spec.summary, '', 'Options:', ...lines, ...(spec.epilog ? ['', ...spec.epilog] : [])].join('\n');
}

/** Parses `args` against `spec`; unknown flags and stray arguments are CommandErrors. */
export function parseOptions(spec: CommandSpec, args: string[]): ParsedOptions {
  const options = Object.fromEntries([
    ...spec.options.map((o) => [o.name, o.value ? { type: 'string' as const, ...(o.default !== undefined ? { default: o.default } : {}) } : { type: 'boolean' as const }]),
    ['help', { type: 'boolean' as const, short: 'h' }],
  ]);
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    if (positionals.length > 0) throw new CommandError(`unexpected argument "${positionals[0]}"; see ${spec.usage.split(' [')[0]} --help`);
    return values as ParsedOptions;
  } catch (err) {
    if (err instanceof CommandError) throw err;
    throw new CommandError(`${(err as Error).message}; see ${spec.usage.split(' [')[0]} --help`);
  }
}

export function intList(values: ParsedOptions, name: string): number[] {
  const text = String(values[name]);
  const list = text.split(',').map((s) => s.trim());
  if (list.some((s) => !/^\d+$/.test(s) || Number(s) < 1)) throw new CommandError(`--${name} takes positive integers separated by commas, got "${text}"`);
  return list.map(Number);
}

export function int(values: ParsedOptions, name: string): number {
  const list = intList(values, name);
  if (list.length !== 1) throw new CommandError(`--${name} takes one positive integer, got "${values[name]}"`);
  return list[0];
}

export function optionalInt(values: ParsedOptions, name: string): number | undefined {
  return values[name] === undefined ? undefined : int(values, name);
}

export function choices<T extends string>(values: ParsedOptions, name: string, allowed: readonly T[]): T[] {
  const list = String(values[name]).split(',').map((s) => s.trim());
  const bad = list.find((s) => !allowed.includes(s as T));
  if (bad !== undefined) throw new CommandError(`--${name}: unknown value "${bad}" (one or more of ${allowed.join(', ')})`);
  return list as T[];
}

export function choice<T extends string>(values: ParsedOptions, name: string, allowed: readonly T[]): T {
  const list = choices(values, name, allowed);
  if (list.length !== 1) throw new CommandError(`--${name} takes one of ${allowed.join(', ')}, got "${values[name]}"`);
  return list[0];
}
