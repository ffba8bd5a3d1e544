// The cluster metadata keys (GET /cluster/metadata/keys, GET|PUT|DELETE
// /cluster/metadata/keys/{key}?wait=). On a single node Qdrant v1.19 refuses each of them with 500
// "Service internal error: Qdrant is running in standalone mode" (src/actix/api/cluster_api.rs);
// reading needs node-wide read, changing node-wide write. Then the routes' wiring to a
// ClusterService, with an in-memory one that records what it was asked.

import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CollectionManager } from '../src/collection/manager.js';
import { defaultConfig } from '../src/config/config.js';
import type { JsonValue } from '../src/model.js';
import { buildServer } from '../src/server/app.js';
import type { ClusterTelemetry } from '../src/cluster/raft-info.js';
import type { ClusterService, ClusterStatus } from '../src/server/cluster-service.js';
import { openNodeState } from '../src/telemetry/node.js';
import { assertError, call, formatErrorMessage, stopAtEnd } from './helpers/api-http.js';
import { startServer } from './helpers/server.js';

const API_KEY = 'metadata-full-key';
const READ_ONLY_KEY = 'metadata-read-key';
const STANDALONE = 'Service internal error: Qdrant is running in standalone mode';

t.test('a single node refuses every metadata request as Qdrant does, after the access check', async (t) => {
  const server = await startServer({ workers: 1, env: { QDRANT__SERVICE__API_KEY: API_KEY, QDRANT__SERVICE__READ_ONLY_API_KEY: READ_ONLY_KEY } });
  stopAtEnd(t, server);
  const send = (method: string, path: string, key: string | null, body?: unknown) =>
    call(server.url, method, path, body, key === null ? {} : { 'api-key': key });

  const reads = ['/cluster/metadata/keys', '/cluster/metadata/keys/some-key'];
  const changes: Array<[string, string, unknown]> = [
    ['PUT', '/cluster/metadata/keys/some-key', { any: ['json', 1, null] }],
    // call() sends a string as it is: this one is the JSON text of a string.
    ['PUT', '/cluster/metadata/keys/some-key?wait=true', '"a string"'],
    ['PUT', '/cluster/metadata/keys/some-key?wait=false', null],
    ['DELETE', '/cluster/metadata/keys/some-key', undefined],
    ['DELETE', '/cluster/metadata/keys/some-key?wait=true', undefined],
  ];
  for (const path of reads) {
    assertError(t, await send('GET', path, API_KEY), 500, STANDALONE, `GET ${path}, full key`);
    assertError(t, await send('GET', path, READ_ONLY_KEY), 500, STANDALONE, `GET ${path}, read-only key: reading is allowed`);
    assertError(t, await send('GET', path, null), 401, 'Must provide an API key or an Authorization bearer token', `GET ${path} without a key`);
  }
  for (const [method, path, body] of changes) {
    assertError(t, await send(method, path, API_KEY, body), 500, STANDALONE, `${method} ${path}, full key`);
    assertError(t, await send(method, path, READ_ONLY_KEY, body), 403, 'Forbidden: Global manage access is required', `${method} ${path}, read-only key`);
    assertError(t, await send(method, path, null, body), 401, 'Must provide an API key or an Authorization bearer token', `${method} ${path} without a key`);
  }

  // What is read before the handler runs is judged first, as Qdrant's extractors do.
  assertError(t, await send('PUT', '/cluster/metadata/keys/k?wait=soon', API_KEY, 1), 400,
    'Deserialize error in query parameters: provided string was not `true` or `false`', 'an unreadable wait');
  assertError(t, await send('DELETE', '/cluster/metadata/keys/k?wait=1', API_KEY), 400,
    'Deserialize error in query parameters: provided string was not `true` or `false`', 'an unreadable wait on DELETE');
  assertError(t, await send('PUT', '/cluster/metadata/keys/k', API_KEY), 400, formatErrorMessage('EOF while parsing a value'), 'no body');
  assertError(t, await send('PUT', '/cluster/metadata/keys/k', API_KEY, '{"a": '), 400, /^Format error in JSON body: /, 'a body that is not JSON');
});

/** Metadata in memory that records each call, as a cluster peer would be called. */
class RecordingMetadata implements ClusterService {
  readonly values = new Map<string, JsonValue>();
  readonly calls: string[] = [];

  async status(): Promise<ClusterStatus> {
    return { status: 'disabled' };
  }

  ready(): boolean {
    return true;
  }

  async telemetry(): Promise<ClusterTelemetry> {
    return { enabled: false };
  }

  async updateQuota(): Promise<void> {
    throw new Error('not asked in this test');
  }

  async removePeer(): Promise<void> {
    throw new Error('not asked in this test');
  }

  async recover(): Promise<void> {
    throw new Error('not asked in this test');
  }

  async quotaPeers(): Promise<undefined> {
    return undefined;
  }

  async peerTelemetry(): Promise<null> {
    return null;
  }

  async keys(): Promise<string[]> {
    this.calls.push('keys');
    return [...this.values.keys()];
  }

  async get(key: string): Promise<JsonValue> {
    this.calls.push(`get ${key}`);
    return this.values.get(key) ?? null;
  }

  async put(key: string, value: JsonValue, wait: boolean): Promise<void> {
    this.calls.push(`put ${key} wait=${wait}`);
    this.values.set(key, value);
  }

  async delete(key: string, wait: boolean): Promise<void> {
    this.calls.push(`delete ${key} wait=${wait}`);
    this.values.delete(key);
  }
}

t.test('the routes hand key, value and wait to the node\'s ClusterMetadata and answer in Qdrant\'s envelope', async (t) => {
  const storage = await mkdtemp(join(tmpdir(), 'quiver-metadata-'));
  t.teardown(() => rm(storage, { recursive: true, force: true }));
  const config = defaultConfig();
  config.storage.storage_path = storage;
  config.storage.snapshots_path = join(storage, 'snapshots');
  const collections = await CollectionManager.open(storage, 1);
  t.teardown(() => collections.close());
  const metadata = new RecordingMetadata();
  const app = buildServer({ config, collections, node: await openNodeState(collections.meta, config), cluster: metadata });
  t.teardown(() => app.close());

  const request = async (method: 'GET' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<unknown> => {
    const response = await app.inject({ method, url, payload: body === undefined ? undefined : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    t.equal(response.statusCode, 200, `${method} ${url}: ${response.body}`);
    const parsed = response.json<{ result: unknown; status: string; time: number }>();
    t.equal(parsed.status, 'ok');
    t.type(parsed.time, 'number');
    return parsed.result;
  };

  t.same(await request('GET', '/cluster/metadata/keys'), []);
  t.equal(await request('PUT', '/cluster/metadata/keys/my%20key', { nested: [1, 'two', null, { three: 3.5 }] }), true);
  t.equal(await request('PUT', '/cluster/metadata/keys/flag?wait=true', false), true);
  t.same(await request('GET', '/cluster/metadata/keys'), ['my key', 'flag']);
  t.same(await request('GET', '/cluster/metadata/keys/my%20key'), { nested: [1, 'two', null, { three: 3.5 }] });
  t.equal(await request('GET', '/cluster/metadata/keys/flag'), false);
  t.equal(await request('DELETE', '/cluster/metadata/keys/flag?wait=true'), true);
  t.equal(await request('DELETE', '/cluster/metadata/keys/my%20key'), true);
  t.equal(await request('GET', '/cluster/metadata/keys/flag'), null, 'a key without a value reads null');
  t.same(metadata.calls, [
    'keys', 'put my key wait=false', 'put flag wait=true', 'keys', 'get my key', 'get flag',
    'delete flag wait=true', 'delete my key wait=false', 'get flag',
  ], 'wait defaults to false, as Qdrant\'s MetadataParams');
});
