// Property-based fuzzing of every route of the REST API, through a real server over raw HTTP.
// The routes are the server's own route table (src/server/query-params.ts, which the server
// checks every registered route against), each route's body schema is found by asking the server
// (below) and the bodies are drawn from that schema (src/api/validator.ts) and broken. For every
// request: the answer comes within a bound, it is never a 5xx (but for the 500s Qdrant gives by
// design, below), every error is in Qdrant's envelope, and a refused (4xx) request leaves the
// observable state exactly as it was. A valid request may change the state; the fixture is then
// put back.
//
// QUIVER_FUZZ_SEED (default 42) and QUIVER_FUZZ_RUNS (default below) choose the run; a failure
// prints its seed and path: QUIVER_FUZZ_PATH=<path> with that seed starts the run at the failing
// request, shrunk as reported.

import t from 'tap';
import fc from 'fast-check';
import type { SchemaObject } from 'ajv';
import { BODY_SCHEMAS, REFERENCED_SCHEMAS, SNAPSHOT_PARAMS, SNAPSHOT_UPLOAD_PARAMS, validateBody, type BodyName } from '../src/api/validator.js';
import { routeCatalogue, type RouteEntry } from '../src/server/route-catalogue.js';
import { startServer } from './helpers/server.js';
import { stopAtEnd } from './helpers/api-http.js';
import { NoAnswer, rawRequest } from './helpers/fuzz-http.js';
import { requestsFor, type FuzzRequest, type PathValues } from './helpers/fuzz-requests.js';
import { BodyGenerator } from './helpers/fuzz-schema.js';
import { ALIAS, createFixture, FIXTURE, restoreFixture, stateDifference, stateOf, VOCABULARY, type Answer, type Send, type ServerState } from './helpers/fuzz-state.js';
import { bodyText } from './helpers/fuzz-values.js';

const SEED = Number(process.env.QUIVER_FUZZ_SEED ?? 42);
// About 25 s for the whole file on a shared 2-core machine (a few times that under load).
const RUNS = Number(process.env.QUIVER_FUZZ_RUNS ?? 600);
const REPLAY_PATH = process.env.QUIVER_FUZZ_PATH;
/** No request may take longer than this to be answered, whatever it holds. */
const ANSWER_BOUND_MS = 10_000;

// Which body schema a route reads, asked of the server: a body of the wrong JSON type is refused
// with serde's description of the type the route expected, which names one body schema.
const NOT_A_BODY = true;
const byDescription = new Map<string, BodyName>();
for (const name of Object.keys(BODY_SCHEMAS) as BodyName[]) {
  let message = '';
  try {
    validateBody(name, NOT_A_BODY);
  } catch (err) {
    message = (err as Error).message;
  }
  if (byDescription.has(message)) throw new Error(`bodies ${byDescription.get(message)} and ${name} are refused alike: the probe cannot tell them apart`);
  byDescription.set(message, name);
}

const server = await startServer({ workers: 2 });
stopAtEnd(t, server);

const send: Send = (method, path, body) => rawRequest(server.port, method, path, body === undefined ? undefined : bodyText(body), ANSWER_BOUND_MS);

/** The fixture, a snapshot of a collection and a full one, and the state they make. */
async function setUp() {
  await createFixture(send);
  const collectionSnapshot = (await send('POST', `/collections/${FIXTURE[0].name}/snapshots?wait=true`)).body as { result: { name: string } };
  const fullSnapshot = (await send('POST', '/snapshots?wait=true')).body as { result: { name: string } };
  return { snapshots: [collectionSnapshot.result.name, fullSnapshot.result.name], pristine: await stateOf(send) };
}

// A failed set-up ends the file before tap's teardown would run: stop the server here.
const { snapshots, pristine } = await setUp().catch(async (err: unknown) => {
  await server.stop();
  throw err;
});

const PATH_VALUES: PathValues = {
  name: [...FIXTURE.map((f) => f.name), ALIAS.alias_name],
  id: VOCABULARY.pointIds.map(String),
  field: [...Object.keys(FIXTURE[0].indexes), 'odd.key', 'nested.arr[].x', 'missing'],
  shard: ['0', '1'],
  vector: ['fresh', 'img', 'txt'],
  snapshot: [...snapshots, 'missing.snapshot'],
  key: ['team', 'a b/c'],
  peer_id: ['1', '18446744073709551615'],
};

/** The message of Qdrant's error envelope, or null when `answer` is not one. */
function errorMessage(answer: Answer): string | null {
  const body = answer.body as { status?: { error?: unknown }; time?: unknown } | null;
  if (typeof body !== 'object' || body === null) return null;
  const keys = Object.keys(body).sort().join();
  if (keys !== 'status,time' || typeof body.time !== 'number' || typeof body.status !== 'object' || body.status === null) return null;
  if (Object.keys(body.status).join() !== 'error' || typeof body.status.error !== 'string') return null;
  return body.status.error;
}

function examplePath(url: string): string {
  return url.split('/').map((part) => (part.startsWith(':') ? encodeURIComponent(PATH_VALUES[part.slice(1)][0]) : part)).join('/');
}

interface FuzzedRoute {
  route: RouteEntry;
  body: BodyName | undefined;
}

const routes: FuzzedRoute[] = [];
await t.test('every route of the table is served, and each body schema is found on a route', async (t) => {
  for (const route of routeCatalogue()) {
    const path = examplePath(route.url);
    const answer = await send(route.method, path, NOT_A_BODY);
    const message = errorMessage(answer);
    // What the server answers for a path no route matches.
    t.not(message, `Not found: ${route.method} ${path}`, `${route.method} ${route.url} is routed`);
    routes.push({ route, body: message === null ? undefined : byDescription.get(message) });
    // The probe's body was not a body: where a route took it anyway (it reads none), the route acted.
    if (answer.status < 400) await restoreFixture(send, pristine);
  }
  const found = new Set(routes.flatMap((r) => r.body ?? []));
  t.same([...found].sort(), Object.keys(BODY_SCHEMAS).sort(), 'every body schema is some route\'s');
});

/**
 * The one exclusion: snapshot jobs sent with wait=false. They are answered 202 and run on in the
 * background, and the API never tells when one is done (a snapshot made in the same second as
 * another takes its name, so not even the listing changes), so no state compare after one could
 * be trusted. `wait` changes only when the answer comes; the jobs themselves are fuzzed with
 * every other query string.
 */
function runsInBackground(route: RouteEntry): boolean {
  return route.params === SNAPSHOT_PARAMS || route.params === SNAPSHOT_UPLOAD_PARAMS;
}

/** Qdrant's answer when a collection, alias or shard-key change outlives its `timeout`: a 500 by design, and the change may still complete. */
const COMMIT_TIMEOUT = /^Service internal error: Waiting for consensus operation commit failed\. Timeout set at: \d+ seconds$/;

/** Whether `answer` is the commit timeout, given after the request's `timeout` really passed. */
function isCommitTimeout(request: FuzzRequest, answer: Answer, message: string | null, elapsedMs: number): boolean {
  const timeout = Number(new URLSearchParams(request.path.split('?')[1] ?? '').get('timeout'));
  return answer.status === 500 && COMMIT_TIMEOUT.test(message ?? '') && timeout > 0 && elapsedMs >= timeout * 1000;
}

/**
 * Qdrant's answer when the snapshot a recovery names cannot be downloaded (an unreachable
 * `http://127.0.0.1:1/...` among the generated locations): its service error, a 500 by design
 * (README, Snapshot downloads). Nothing may have changed.
 */
const DOWNLOAD_FAILED = /^Service internal error: (Http request error: error sending request for url \(|Failed to unpack tar archive: )/;

function isDownloadFailure(request: FuzzRequest, answer: Answer, message: string | null): boolean {
  return answer.status === 500 && request.route.endsWith('/snapshots/recover') && DOWNLOAD_FAILED.test(message ?? '');
}

/**
 * Qdrant's answer to a Document, Image or Object for a model other than its local BM25 when no
 * inference service is configured (Quiver has none): a 500 by design (README, BM25 documents).
 * It comes before anything is routed, so nothing may have changed.
 */
const NO_INFERENCE_SERVICE = 'Service internal error: InferenceService URL not configured - please provide valid address in config';

/**
 * Qdrant's answer to every cluster metadata-key request and to `POST /cluster/recover` on a node
 * outside distributed mode: a 500 by design (README, Cluster mode). Nothing is stored.
 */
const STANDALONE = 'Service internal error: Qdrant is running in standalone mode';

function isDesignedServerError(request: FuzzRequest, answer: Answer, message: string | null): boolean {
  return isDownloadFailure(request, answer, message) || (answer.status === 500 && (message === NO_INFERENCE_SERVICE || (message === STANDALONE && (request.route.includes('/cluster/metadata/keys') || request.route === 'POST /cluster/recover'))));
}

function describe(request: FuzzRequest, answer: Answer): string {
  const shown = (text: string | undefined) => (text === undefined ? '(none)' : text.length > 2000 ? `${text.slice(0, 2000)}... (${text.length} characters)` : text);
  return `${request.method} ${shown(request.path)}\nbody: ${shown(request.body)}\nanswer ${answer.status}: ${shown(JSON.stringify(answer.body))}`;
}

const generator = new BodyGenerator(REFERENCED_SCHEMAS, VOCABULARY);
/** The state before the request being checked: the last one seen. */
let baseline: ServerState = pristine;

async function check(request: FuzzRequest): Promise<void> {
  let answer: Answer;
  const start = performance.now();
  try {
    answer = await rawRequest(server.port, request.method, request.path, request.body, ANSWER_BOUND_MS);
  } catch (err) {
    if (err instanceof NoAnswer) throw new Error(`${request.method} ${request.path}: ${err.message}`);
    throw new Error(`${request.method} ${request.path}: the connection failed (${(err as Error).message}); server output:\n${server.output().slice(-1500)}`);
  }
  const elapsedMs = performance.now() - start;
  const message = errorMessage(answer);
  if (answer.status >= 400 && message === null) throw new Error(`an error outside Qdrant's envelope:\n${describe(request, answer)}`);
  const mayHaveActed = answer.status < 400 || isCommitTimeout(request, answer, message, elapsedMs);
  if (answer.status >= 500 && !mayHaveActed && !isDesignedServerError(request, answer, message)) {
    await restoreFixture(send, pristine);
    baseline = await stateOf(send);
    throw new Error(`a server error:\n${describe(request, answer)}\nserver output:\n${server.output().slice(-1500)}`);
  }
  if (mayHaveActed) {
    if (request.method !== 'GET') {
      await restoreFixture(send, pristine);
      baseline = await stateOf(send);
    }
    return;
  }
  const after = await stateOf(send);
  const difference = stateDifference(baseline, after);
  if (difference !== null) {
    await restoreFixture(send, pristine);
    baseline = await stateOf(send);
    throw new Error(`a refused request changed the state (${difference}):\n${describe(request, answer)}`);
  }
}

await t.test(`fuzzed requests (seed ${SEED}, ${RUNS} runs)`, async (t) => {
  baseline = await stateOf(send);
  const request = fc.oneof(...routes.map(({ route, body }) => {
    const requests = requestsFor(route, body === undefined ? undefined : (BODY_SCHEMAS[body] as SchemaObject), generator, PATH_VALUES);
    return runsInBackground(route) ? requests.filter((r) => !/[?&]wait=false(&|$)/.test(r.path)) : requests;
  }));
  const outcome = await fc.check(fc.asyncProperty(request, check), { seed: SEED, numRuns: RUNS, ...(REPLAY_PATH === undefined ? {} : { path: REPLAY_PATH }) });
  if (outcome.failed) t.fail(`${fc.defaultReportMessage(outcome) ?? 'the property failed'}\n${(outcome.errorInstance as Error | undefined)?.message ?? ''}`);
  else t.pass(`${outcome.numRuns} requests answered in time, without a server error, refusals changing nothing`);
});

