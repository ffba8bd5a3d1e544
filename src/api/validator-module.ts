// The contract between the generated validators (build/validators.js, written by
// `npm run build:server`, see validator-compiler.ts) and the code that loads them. The file is
// a script, not a module: one function expression that builds every body's validators around
// Quiver's keyword functions (reached by keyword name) and a `require` for Ajv's run-time helpers.
// A script can be compiled with V8's code cache (build/validators.code-cache, made by the same
// build), which spares a start parsing its megabytes of generated code; a module cannot on Node 20.
// Its first line names the sources it was generated from (validatorFingerprint()).

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { ValidateFunction } from 'ajv';
import type { BodyName } from './body-schemas.js';
import { KEYWORD_FUNCTIONS, type KeywordFunctions } from './validator-keywords.js';

/** A body's validators: its shape (serde's parse) and its rules (the validator crate; null when it has none). */
export interface CompiledBody {
  shape: ValidateFunction;
  rules: ValidateFunction | null;
}

export type CompiledBodies = Readonly<Record<BodyName, CompiledBody>>;

/** What the script evaluates to. */
export type ValidatorFactory = (keywords: KeywordFunctions, require: NodeJS.Require) => Readonly<Record<string, ValidateFunction>>;

// build/ at the repository root: two levels above this file, and above the server bundle in build/server/.
export const GENERATED_VALIDATORS_PATH = fileURLToPath(new URL('../../build/validators.js', import.meta.url));
export const VALIDATORS_CODE_CACHE_PATH = fileURLToPath(new URL('../../build/validators.code-cache', import.meta.url));

const FINGERPRINT_LINE = '// fingerprint ';

/** The script's first line, naming the sources by their fingerprint. */
export function fingerprintLine(fingerprint: string): string {
  return `${FINGERPRINT_LINE}${fingerprint}`;
}

/** The name under which the script's factory returns a body's shape or rules validator. */
export function exportName(part: 'shape' | 'rules', name: BodyName): string {
  return `${part}_${name}`;
}

export interface GeneratedValidators {
  fingerprint: string;
  /** Compiles the script (with the code cache when V8 accepts it) and builds the validators. */
  bodies(names: readonly BodyName[]): CompiledBodies;
}

/** The generated validators of the last build, or null when there are none. */
export function readGeneratedValidators(): GeneratedValidators | null {
  if (!existsSync(GENERATED_VALIDATORS_PATH)) return null;
  const source = readFileSync(GENERATED_VALIDATORS_PATH, 'utf8');
  const firstLine = source.slice(0, source.indexOf('\n'));
  return {
    fingerprint: firstLine.startsWith(FINGERPRINT_LINE) ? firstLine.slice(FINGERPRINT_LINE.length) : '',
    bodies: (names) => bodiesFrom(compileScript(source).runInThisContext() as ValidatorFactory, names),
  };
}

/**
 * The script compiled with V8's code cache when it has one: V8 checks that the cache was made from
 * this very source by this V8 with compatible flags, and parses the source as usual otherwise.
 */
export function compileScript(source: string): Script {
  const cachedData = existsSync(VALIDATORS_CODE_CACHE_PATH) ? readFileSync(VALIDATORS_CODE_CACHE_PATH) : undefined;
  return new Script(source, { filename: GENERATED_VALIDATORS_PATH, cachedData });
}

function bodiesFrom(factory: ValidatorFactory, names: readonly BodyName[]): CompiledBodies {
  const functions = factory(KEYWORD_FUNCTIONS, createRequire(GENERATED_VALIDATORS_PATH));
  return Object.fromEntries(names.map((name) => {
    const shape = functions[exportName('shape', name)];
    if (shape === undefined) throw new Error(`${GENERATED_VALIDATORS_PATH} has no validator for ${name}: run npm run build`);
    return [name, { shape, rules: functions[exportName('rules', name)] ?? null }];
  })) as Record<BodyName, CompiledBody>;
}
