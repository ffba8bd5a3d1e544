// Requests for one route of the server's route table: path parameters (mostly the fixture's
// names, else odd ones: unicode, encoded slashes, dot segments, very long, empty), a query string
// (the route's own parameters and others, with odd values and malformed encodings) and a body
// (drawn from the route's body schema and broken by mutations, or malformed text).

import fc from 'fast-check';
import type { SchemaObject } from 'ajv';
import type { RouteEntry } from '../../src/server/route-catalogue.js';
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

/** A request part in two kinds: as a careful client sends it, and broken. */
interface Part<T> {
  sound: fc.Arbitrary<T>;
  broken: fc.Arbitrary<T>;
}

function queryString(params: QueryParamSet): Part<string> {
  const names = Object.keys(params);
  // The values each parameter's own parser takes.
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
  const text = (list: readonly string[]) => (list.length === 0 ? '' : `?${list.join('&')}`);
  const sound = accepted.length === 0 ? fc.constant([]) : fc.oneof(fc.constant([]), fc.uniqueArray(fc.constantFrom(...accepted), { maxLength: 2, selector: (pair) => pair.split('=')[0] }));
  return { sound: sound.map(text), broken: fc.array(odd, { minLength: 1, maxLength: 3 }).map(text) };
}

/** Path parameters of every route, by name, each from the fixture's values first. */
export interface PathValues {
  [param: string]: readonly string[];
}

const ODD_SEGMENT = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ODD_SEGMENTS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }).map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.constant('') },
);

function pathOf(url: string, values: PathValues): Part<string> {
  const parts = url.split('/').map((part) => {
    if (!part.startsWith(':')) return { sound: fc.constant(part), broken: fc.constant(part) };
    const sensible = values[part.slice(1)];
    if (!sensible) throw new Error(`fuzz: no values for path parameter ${part}`);
    const sound = fc.constantFrom(...sensible).map(encodeURIComponent);
    return { sound, broken: fc.oneof({ weight: 1, arbitrary: sound }, { weight: 2, arbitrary: ODD_SEGMENT }) };
  });
  const join = (p: string[]) => p.join('/');
  return { sound: fc.tuple(...parts.map((p) => p.sound)).map(join), broken: fc.tuple(...parts.map((p) => p.broken)).map(join) };
}

function bodyOf(schema: SchemaObject | undefined, generator: BodyGenerator): Part<string | undefined> {
  const raw = fc.constantFrom(...RAW_BODIES);
  // Routes without a JSON body must ignore (or refuse) whatever is sent.
  if (!schema) return { sound: fc.constant(undefined), broken: fc.oneof(raw, fc.jsonValue({ maxDepth: 2 }).map(bodyText)) };
  const skeleton = generator.body(schema);
  return {
    sound: skeleton.map(bodyText),
    broken: fc.oneof(
      { weight: 8, arbitrary: fc.tuple(skeleton, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([body, ms]) => bodyText(mutate(body, ms))) },
      { weight: 1, arbitrary: fc.oneof(raw, fc.constant(undefined)) },
    ),
  };
}

/**
 * Requests for `route`, whose JSON body (if any) has `schema`. Most break one part only, so that
 * the checks behind the first one are reached too; some are sound throughout, so that the code
 * behind validation runs; some break everything.
 */
export function requestsFor(route: RouteEntry, schema: SchemaObject | undefined, generator: BodyGenerator, values: PathValues): fc.Arbitrary<FuzzRequest> {
  const path = pathOf(route.url, values);
  const query = queryString(route.params);
  const body = bodyOf(schema, generator);
  const request = (p: fc.Arbitrary<string>, q: fc.Arbitrary<string>, b: fc.Arbitrary<string | undefined>): fc.Arbitrary<FuzzRequest> =>
    fc.tuple(p, q, b).map(([pathText, queryText, bodyText]) => ({
      route: `${route.method} ${route.url}`,
      method: route.method,
      path: pathText + queryText,
      ...(bodyText === undefined ? {} : { body: bodyText }),
    }));
  return fc.oneof(
    { weight: 3, arbitrary: request(path.sound, query.sound, body.sound) },
    { weight: 1, arbitrary: request(path.broken, query.sound, body.sound) },
    { weight: 1, arbitrary: request(path.sound, query.broken, body.sound) },
    { weight: 4, arbitrary: request(path.sound, query.sound, body.broken) },
    { weight: 1, arbitrary: request(path.broken, query.broken, body.broken) },
  );
}
