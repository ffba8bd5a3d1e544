// Requests for one route of the server's route table: path parameters (mostly the fixture's
// names, else odd ones: unicode, encoded slashes, dot segments, very long, empty), a query string
// (the route's own parameters and others, with odd values and malformed encodings) and a body
// (drawn from the route's body schema and broken by mutations, or malformed text).

import fc from 'fast-check';
import type { SchemaObject } from 'ajv';
import type { RouteEntry } from '../../src/server/query-params.js';
import { parseQuery, type QueryParamSet } from '../../src/api/schemas/query.js';
import { mutate, mutation } from './fuzz-mutate.js';
import type { BodyGenerator } from './fuzz-schema.js';
import { bodyText, RAW_BODIES } from './fuzz-values.js';

/** A request as sent, printable as it is in a failure report. */
export interface FuzzRequest {
  route: string;
  method: string;
  /** Sent exactly as written: no client normalises its dot segments or encoding. */
  path: string;
  body?: string;
}

/** Path segments (already percent-encoded where the text says so) that are not the fixture's names. */
const ODD_SEGMENTS: readonly string[] = [
  'fuzz_missing', '..', '.', '%2E%2E', '%2e', '%2F', 'a%2Fb', '..%2F..%2Fetc', '%00', 'a%00b', '%20', '%C3%A9', '%F0%9F%98%80', '%E2%80%AE',
  '%FF', '%C0%AF', '%', '%zz', 'x'.repeat(255), 'x'.repeat(256), '%C3%A9'.repeat(255), 'x'.repeat(5000), '0', '-1', '1.5', '1e3',
  '18446744073709551616', '99999999999999999999999', '00000000-0000-0000-0000-000000000000', 'NaN', '__proto__', 'constructor', '*', '%3Cscript%3E',
  '..%5C..%5Cwindows', 'a;b', 'a,b', 'snap.snapshot', '..snapshot', '.snapshot', '%2E%2E%2Fstorage',
];

const ODD_QUERY_VALUES: readonly string[] = [
  'true', 'false', 'True', '1', '0', '-1', '+1', '', '10', '1.5', '1e3', '18446744073709551615', '18446744073709551616', '99999999999999999999999',
  'majority', 'quorum', 'all', 'weak', 'medium', 'strong', 'queued', 'completed', 'idle_segments', 'queued,completed', ',,', 'x',
  '%00', '%FF', '%zz', '%', '%E2%82%AC', '%F0%9F%98%80', 'a%26b%3Dc', 'x'.repeat(3000),
];

const EXTRA_QUERY_KEYS: readonly string[] = ['__proto__', 'constructor', 'toString', 'wait[]', 'timeout[0]', '', '%00', 'x'];

function decoded(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

function queryString(params: QueryParamSet): fc.Arbitrary<string> {
  const names = Object.keys(params);
  // The values each parameter's own parser takes, so that most query strings get past it.
  const accepted = names.flatMap((name) => ODD_QUERY_VALUES.filter((value) => {
    const text = decoded(value);
    return text !== undefined && parseQuery(params, { [name]: text }).ok;
  }).map((value) => `${name}=${value}`));
  const key = fc.oneof({ weight: 4, arbitrary: names.length > 0 ? fc.constantFrom(...names) : fc.constantFrom(...EXTRA_QUERY_KEYS) }, { weight: 1, arbitrary: fc.constantFrom(...EXTRA_QUERY_KEYS) });
  const odd = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(key, fc.constantFrom(...ODD_QUERY_VALUES)).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: key },
    { weight: 1, arbitrary: fc.constantFrom('', '=', '&', '==', 'a=b=c') },
  );
  const pairs = fc.oneof(
    { weight: 6, arbitrary: fc.constant([]) },
    ...(accepted.length > 0 ? [{ weight: 3, arbitrary: fc.uniqueArray(fc.constantFrom(...accepted), { maxLength: 2, selector: (pair) => pair.split('=')[0] }) }] : []),
    { weight: 2, arbitrary: fc.array(odd, { minLength: 1, maxLength: 3 }) },
  );
  return pairs.map((list) => (list.length === 0 ? '' : `?${list.join('&')}`));
}

/** Path parameters of every route, by name, each from the fixture's values first. */
export interface PathValues {
  [param: string]: readonly string[];
}

function segment(sensible: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 16, arbitrary: fc.constantFrom(...sensible).map(encodeURIComponent) },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_SEGMENTS) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }).map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constant('') },
  );
}

function pathOf(url: string, values: PathValues): fc.Arbitrary<string> {
  const parts = url.split('/').map((part) => {
    if (!part.startsWith(':')) return fc.constant(part);
    const sensible = values[part.slice(1)];
    if (!sensible) throw new Error(`fuzz: no values for path parameter ${part}`);
    return segment(sensible);
  });
  return fc.tuple(...parts).map((p) => p.join('/'));
}

function bodyOf(schema: SchemaObject | undefined, generator: BodyGenerator): fc.Arbitrary<string | undefined> {
  const raw = fc.constantFrom(...RAW_BODIES);
  if (!schema) {
    // Routes without a JSON body must ignore (or refuse) whatever is sent.
    return fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: raw }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map(bodyText) });
  }
  const skeleton = generator.body(schema);
  return fc.oneof(
    // Well-formed bodies, so that the code behind validation runs too.
    { weight: 4, arbitrary: skeleton.map(bodyText) },
    { weight: 6, arbitrary: fc.tuple(skeleton, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([body, ms]) => bodyText(mutate(body, ms))) },
    { weight: 1, arbitrary: fc.oneof(raw, fc.constant(undefined)) },
  );
}

/** Requests for `route`, whose JSON body (if any) has `schema`. */
export function requestsFor(route: RouteEntry, schema: SchemaObject | undefined, generator: BodyGenerator, values: PathValues): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    route: fc.constant(`${route.method} ${route.url}`),
    method: fc.constant(route.method),
    path: fc.tuple(pathOf(route.url, values), queryString(route.params)).map(([path, query]) => path + query),
    body: bodyOf(schema, generator),
  }, { requiredKeys: ['route', 'method', 'path'] });
}
