// Resource quotas: the hysteresis and Qdrant's rejection texts as units; the node's quota guard
// against this process's real resident memory with a limit of 1% (reached by holding that much);
// then the real server driven with a disk limit of 1% (always reached on the test filesystem): memory- or
// disk-consuming updates get 507 and change nothing, reads and point deletions keep working,
// raising the limit lets writes through again, and the configuration survives a restart and
// wins over `storage.quotas` once set through the API.

import { statfsSync } from 'node:fs';
import t, { type Test } from 'tap';
import { tmpdir } from 'node:os';
import { InsufficientStorage } from '../src/errors.js';
import { fromWire, type QuotaConfig } from '../src/quota/config.js';
import { QuotaGuard } from '../src/quota/guard.js';
import { judge, rejectionMessage } from '../src/quota/verdict.js';
import { availableMemoryBytes, percentOf, residentMemoryPercent } from '../src/quota/meter.js';
import { assertError, call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { ONE_PEER_CLUSTER, startServer, type RunningServer } from './helpers/server.js';

t.test('hysteresis: trips at the limit, clears only below limit minus margin', async (t) => {
  t.same(judge(false, 89, 90, 5), { exceeded: false, threshold: 90 });
  t.same(judge(false, 90, 90, 5), { exceeded: true, threshold: 90 }, 'reaching the limit trips it');
  t.same(judge(true, 87, 90, 5), { exceeded: true, threshold: 85 }, 'inside the margin it stays tripped');
  t.same(judge(true, 85, 90, 5), { exceeded: true, threshold: 85 });
  t.same(judge(true, 84, 90, 5), { exceeded: false, threshold: 85 }, 'released below the margin');
  t.same(judge(true, 89, 90, 0), { exceeded: false, threshold: 90 }, 'margin 0 releases under the limit');
  t.same(judge(true, 0, 3, 5), { exceeded: true, threshold: 0 }, 'a margin above the limit never releases');
  t.equal(percentOf(999, 1000), 99, 'rounds down');
  t.equal(percentOf(200, 100), 100, 'at most 100');
  t.equal(percentOf(0, 0), null, 'no capacity, no reading');
});

t.test("Qdrant's rejection texts", async (t) => {
  t.equal(
    rejectionMessage('disk_usage', 95, 90, 90),
    'Disk usage is at 95% of total capacity, exceeding the configured limit of 90%. Help: Reduce disk usage (e.g. delete points or drop collections), or raise `max_disk_usage_percent` in the global quota config.',
  );
  t.equal(
    rejectionMessage('disk_usage', 87, 90, 85),
    'Disk usage is at 87% of total capacity. It reached the configured limit of 90% and has to fall below 85% before this node takes writes again. Help: Reduce disk usage (e.g. delete points or drop collections), or raise `max_disk_usage_percent` in the global quota config.',
  );
  t.equal(
    rejectionMessage('resident_memory', 80, 75, 75),
    'Resident memory usage is at 80% of total memory, exceeding the configured limit of 75%. Help: Reduce memory usage (e.g. delete points or drop collections), or raise `max_resident_memory_percent` in the global quota config.',
  );
});

t.test('a memory limit trips on the resident memory of the process', async (t) => {
  const saved: QuotaConfig[] = [];
  const guard = await QuotaGuard.open({ load: async () => undefined, save: async (config) => void saved.push(config) }, fromWire({}), tmpdir());
  // Resident memory of at least 1% of what the process may use: pages written, so they are resident.
  const onePercent = Math.ceil(availableMemoryBytes() / 100);
  const ballast = Buffer.alloc(Math.max(0, onePercent - process.memoryUsage.rss()) + 64 * 1024 * 1024).fill(1);
  const used = residentMemoryPercent()!;
  t.ok(used >= 1, `resident memory is ${used}% of ${availableMemoryBytes()} bytes`);

  await guard.update(fromWire({ enabled: true, max_resident_memory_percent: 1 }));
  t.same(saved, [{ enabled: true, max_resident_memory_percent: 1, max_disk_usage_percent: null, release_margin_percent: null }], 'the configuration is stored');
  t.same(guard.exceeded(), { resident_memory: true, disk_usage: null }, 'memory over its limit; disk not capped');
  const refusal = (() => {
    try {
      guard.check();
      return null;
    } catch (err) {
      return err;
    }
  })();
  t.ok(refusal instanceof InsufficientStorage, 'refused with the insufficient-storage error (507)');
  t.match((refusal as Error).message, /^Resident memory usage is at \d+% of total memory, exceeding the configured limit of 1%\. Help: Reduce memory usage \(e\.g\. delete points or drop collections\), or raise `max_resident_memory_percent` in the global quota config\.$/);
  t.doesNotThrow(() => guard.checkWrite([{ kind: 'delete' }]), 'point deletions still pass');
  t.throws(() => guard.checkWrite([{ kind: 'delete' }, { kind: 'upsert' }]), 'a write that stores points does not');

  await guard.update(fromWire({ enabled: true, max_resident_memory_percent: used, release_margin_percent: 5 }));
  t.equal(guard.exceeded().resident_memory, true, 'reaching the limit trips it');
  await guard.update(fromWire({ enabled: true, max_resident_memory_percent: Math.min(100, used + 50), release_margin_percent: 5 }));
  t.equal(guard.exceeded().resident_memory, false, 'a limit above the usage lets writes through');
  t.doesNotThrow(() => guard.check());
  await guard.update(fromWire({ enabled: false, max_resident_memory_percent: 1 }));
  t.same(guard.exceeded(), { resident_memory: null, disk_usage: null }, 'a disabled quota enforces nothing');
  ballast.fill(0);
});

/** The storage filesystem's usage as the server computes it: all but the space available to the process. */
function diskPercent(path: string): number {
  const s = statfsSync(path);
  return Math.floor(((s.blocks - s.bavail) * 100) / s.blocks);
}

const DISK_REJECTION = /^Disk usage is at (\d+)% of total capacity, exceeding the configured limit of 1%\. Help: Reduce disk usage \(e\.g\. delete points or drop collections\), or raise `max_disk_usage_percent` in the global quota config\.$/;

async function count(server: RunningServer, name: string): Promise<number> {
  const response = await call(server.url, 'POST', `/collections/${name}/points/count`, {});
  return (response.body as { result: { count: number } }).result.count;
}

/**
 * A single node applies a quota change before it answers; a cluster peer, without `wait`, once
 * the change committed (Qdrant's consensus semantics): a check that needs it applied waits there.
 */
const APPLIED = ONE_PEER_CLUSTER ? '?wait=true' : '';

async function upsert(server: RunningServer, name: string, ids: number[]) {
  return call(server.url, 'PUT', `/collections/${name}/points?wait=true`, { points: ids.map((id) => ({ id, vector: [id, 1], payload: { k: id } })) });
}

function refused(t: Test, response: { status: number; body: unknown }, storage: string, what: string): void {
  assertError(t, response, 507, DISK_REJECTION, what);
  const percent = Number(DISK_REJECTION.exec((response.body as { status: { error: string } }).status.error)?.[1]);
  t.ok(Math.abs(percent - diskPercent(storage)) <= 1, `${what}: the reported usage is the storage filesystem's`);
}

t.test('quota API and enforcement on a running server', async (t) => {
  const server = await startServer({ workers: 2 });
  stopAtEnd(t, server);
  const status = resultOf<{ config: Record<string, unknown>; usage: { resident_memory_percent: number; disk_usage_percent: number }; peers?: unknown }>(t, await call(server.url, 'GET', '/quotas'));
  t.same(status.config, { enabled: false }, 'disabled by default');
  if (ONE_PEER_CLUSTER) t.equal(Object.keys(status.peers as object).length, 1, 'a cluster peer reports the answering peers: itself');
  else t.notOk('peers' in status, 'no peer map outside distributed mode');
  t.ok(Math.abs(status.usage.disk_usage_percent - diskPercent(server.storage)) <= 1, 'disk usage of the storage filesystem');
  t.ok(status.usage.resident_memory_percent >= 0 && status.usage.resident_memory_percent <= 100, 'resident memory percent');

  t.equal(resultOf(t, await call(server.url, 'PUT', '/quotas', {})), true, '{} is a valid body');
  assertError(t, await call(server.url, 'PUT', '/quotas', { max_disk_usage_percent: 0 }), 422, 'Validation error in JSON body: [max_disk_usage_percent: value 0 invalid, must be from 1 to 100]');
  assertError(t, await call(server.url, 'PUT', '/quotas', { release_margin_percent: 101 }), 422, 'Validation error in JSON body: [release_margin_percent: value 101 invalid, must be from 0 to 100]');
  t.equal((await call(server.url, 'PUT', '/quotas', { enabled: 'yes' })).status, 400, 'a non-boolean enabled is a format error');
  t.same(resultOf<{ config: unknown }>(t, await call(server.url, 'GET', '/quotas')).config, { enabled: false }, 'rejected bodies changed nothing');

  t.equal((await call(server.url, 'PUT', '/collections/q', { vectors: { size: 2, distance: 'Euclid' }, shard_number: 2 })).status, 200);
  t.equal((await upsert(server, 'q', [1, 2, 3, 4])).status, 200);

  t.equal(resultOf(t, await call(server.url, 'PUT', '/quotas?wait=true', { enabled: true, max_disk_usage_percent: 1 })), true);
  t.same(resultOf<{ config: unknown }>(t, await call(server.url, 'GET', '/quotas')).config, { enabled: true, max_disk_usage_percent: 1 });

  refused(t, await upsert(server, 'q', [5]), server.storage, 'upsert');
  refused(t, await call(server.url, 'PUT', '/collections/q/points/vectors', { points: [{ id: 1, vector: [9, 9] }] }), server.storage, 'vector update');
  refused(t, await call(server.url, 'POST', '/collections/q/points/payload', { payload: { x: 1 }, points: [1] }), server.storage, 'set payload');
  refused(t, await call(server.url, 'POST', '/collections/q/points/payload/delete', { keys: ['k'], points: [1] }), server.storage, 'payload key deletion rewrites the point');
  refused(t, await call(server.url, 'POST', '/collections/q/points/batch', { operations: [{ delete: { points: [1] } }, { upsert: { points: [{ id: 9, vector: [1, 1] }] } }] }), server.storage, 'batch with an upsert');
  refused(t, await call(server.url, 'PUT', '/collections/q2', { vectors: { size: 2, distance: 'Dot' } }), server.storage, 'collection creation');
  refused(t, await call(server.url, 'PUT', '/collections/q/index', { field_name: 'k', field_schema: 'integer' }), server.storage, 'index creation');

  t.equal(resultOf<{ exists: boolean }>(t, await call(server.url, 'GET', '/collections/q2/exists')).exists, false, 'refused collection not created');
  const points = resultOf<{ points: { id: number; payload: Record<string, unknown>; vector: number[] }[] }>(t, await call(server.url, 'POST', '/collections/q/points/scroll', { with_payload: true, with_vector: true }));
  t.same(points.points.map((p) => [p.id, p.payload, p.vector]), [1, 2, 3, 4].map((id) => [id, { k: id }, [id, 1]]), 'reads work and refused writes changed nothing');
  const hits = resultOf<{ id: number }[]>(t, await call(server.url, 'POST', '/collections/q/points/search', { vector: [4, 1], limit: 1 }));
  t.equal(hits[0].id, 4, 'search works');
  t.same(resultOf<{ payload_schema: unknown }>(t, await call(server.url, 'GET', '/collections/q')).payload_schema, {}, 'no index was created');

  t.equal((await call(server.url, 'POST', '/collections/q/points/delete?wait=true', { points: [4] })).status, 200, 'deleting points is allowed');
  t.equal((await call(server.url, 'POST', '/collections/q/points/batch?wait=true', { operations: [{ delete: { points: [3] } }] })).status, 200, 'a batch of deletions is allowed');
  t.equal(await count(server, 'q'), 2);

  const telemetry = resultOf<{ quota: unknown }>(t, await call(server.url, 'GET', '/telemetry'));
  t.same(telemetry.quota, { config: { enabled: true, max_disk_usage_percent: 1 }, exceeded: { resident_memory: null, disk_usage: true } }, 'telemetry reports the verdict');
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  t.match(metrics, /^quota_exceeded\{resource="disk"\} 1$/m, 'metrics report the disk quota reached');
  t.notMatch(metrics, /quota_exceeded\{resource="memory"\}/, 'no series for a resource without a limit');

  // Restart: the API-set configuration is persisted.
  await server.stop();
  const again = await startServer({ storage: server.storage, workers: 2 });
  t.teardown(() => again.stop());
  t.same(resultOf<{ config: unknown }>(t, await call(again.url, 'GET', '/quotas')).config, { enabled: true, max_disk_usage_percent: 1 }, 'configuration survived the restart');
  refused(t, await upsert(again, 'q', [6]), again.storage, 'upsert after restart');

  t.equal(resultOf(t, await call(again.url, 'PUT', `/quotas${APPLIED}`, { enabled: true, max_disk_usage_percent: 100, release_margin_percent: 0 })), true);
  const allowed = diskPercent(again.storage) < 100;
  t.equal((await upsert(again, 'q', [7])).status, allowed ? 200 : 507, 'raising the limit lets writes through at once');
  t.equal(await count(again, 'q'), allowed ? 3 : 2);
});

t.test('storage.quotas applies until a quota is set through the API', async (t) => {
  const env = { QDRANT__STORAGE__QUOTAS__ENABLED: 'true', QDRANT__STORAGE__QUOTAS__MAX_DISK_USAGE_PERCENT: '1' };
  const server = await startServer({ workers: 1, env });
  stopAtEnd(t, server);
  t.same(resultOf<{ config: unknown }>(t, await call(server.url, 'GET', '/quotas')).config, { enabled: true, max_disk_usage_percent: 1 }, 'from the environment');
  refused(t, await call(server.url, 'PUT', '/collections/e', { vectors: { size: 2, distance: 'Dot' } }), server.storage, 'collection creation');

  t.equal(resultOf(t, await call(server.url, 'PUT', `/quotas${APPLIED}`, {})), true);
  t.equal((await call(server.url, 'PUT', '/collections/e', { vectors: { size: 2, distance: 'Dot' } })).status, 200, 'API configuration replaces the file one');
  await server.stop();
  const again = await startServer({ storage: server.storage, workers: 1, env });
  t.teardown(() => again.stop());
  t.same(resultOf<{ config: unknown }>(t, await call(again.url, 'GET', '/quotas')).config, { enabled: false }, 'the API configuration still wins after a restart');
  t.equal((await upsert(again, 'e', [1])).status, 200);
});
