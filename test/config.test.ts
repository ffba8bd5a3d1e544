// Configuration layers: defaults < YAML file < QDRANT__SECTION__KEY environment < flags.

import t from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultConfig, isLoopback, loadConfig } from '../src/config/config.js';
import { tempDir } from './helpers/temp-dir.js';

t.test('defaults are Qdrant\'s, bound to loopback', async (t) => {
  const config = loadConfig([], {});
  t.equal(config.service.http_port, 6333);
  t.equal(config.service.host, '127.0.0.1');
  t.equal(config.storage.storage_path, './storage');
  t.equal(config.storage.snapshots_path, './snapshots');
  t.equal(config.service.api_key, null);
  t.ok(config.workers >= 1);
  t.same(defaultConfig().service.max_request_size_mb, 32);
});

t.test('each layer overrides the one before', async (t) => {
  const dir = await tempDir('quiver-config-');
  const file = join(dir, 'config.yaml');
  await writeFile(file, 'service:\n  http_port: 7000\n  host: 127.0.0.2\n  unknown_key: 1\nstorage:\n  storage_path: /from/yaml\nlog_level: DEBUG\n');
  const fromFile = loadConfig(['--config-path', file], {});
  t.equal(fromFile.service.http_port, 7000);
  t.equal(fromFile.service.host, '127.0.0.2');
  t.equal(fromFile.storage.storage_path, '/from/yaml');
  t.equal(fromFile.log_level, 'DEBUG');

  const env = { QDRANT__SERVICE__HTTP_PORT: '7001', QDRANT__STORAGE__SNAPSHOTS_PATH: '/from/env', QDRANT__SERVICE__API_KEY: 'secret', QDRANT__SERVICE__JWT_RBAC: 'true' };
  const fromEnv = loadConfig(['--config-path', file], env);
  t.equal(fromEnv.service.http_port, 7001, 'environment beats the file');
  t.equal(fromEnv.storage.snapshots_path, '/from/env');
  t.equal(fromEnv.storage.storage_path, '/from/yaml', 'the file still gives what the environment does not');
  t.equal(fromEnv.service.api_key, 'secret');
  t.equal(fromEnv.service.jwt_rbac, true, 'values parse as YAML scalars');

  const fromFlags = loadConfig(['--config-path', file, '--port', '7002', '--storage-path', '/from/flag', '--workers', '3'], env);
  t.equal(fromFlags.service.http_port, 7002, 'flags beat the environment');
  t.equal(fromFlags.storage.storage_path, '/from/flag');
  t.equal(fromFlags.workers, 3);
});

t.test('bad values are refused', async (t) => {
  t.throws(() => loadConfig(['--port', '99999'], {}), /invalid service.http_port/);
  t.throws(() => loadConfig(['--config-path', '/nonexistent/quiver.yaml'], {}), /config file not found/);
  t.throws(() => loadConfig(['--bogus'], {}));
});

t.test('worker limits and the shutdown bound: defaults, environment, refusals', async (t) => {
  const defaults = loadConfig([], {});
  t.same(defaults.worker_limits, { memory_mb: null, task_timeout_sec: 600, deadline_grace_sec: 5 });
  t.equal(defaults.service.shutdown_timeout_sec, 30);
  const set = loadConfig([], { QDRANT__WORKER_LIMITS__MEMORY_MB: '512', QDRANT__WORKER_LIMITS__TASK_TIMEOUT_SEC: '60', QDRANT__WORKER_LIMITS__DEADLINE_GRACE_SEC: '0.5', QDRANT__SERVICE__SHUTDOWN_TIMEOUT_SEC: '10' });
  t.same(set.worker_limits, { memory_mb: 512, task_timeout_sec: 60, deadline_grace_sec: 0.5 });
  t.equal(set.service.shutdown_timeout_sec, 10);
  t.throws(() => loadConfig([], { QDRANT__WORKER_LIMITS__MEMORY_MB: '0' }), /invalid worker_limits.memory_mb: 0/);
  t.throws(() => loadConfig([], { QDRANT__WORKER_LIMITS__MEMORY_MB: '1.5' }), /invalid worker_limits.memory_mb: 1.5/);
  t.throws(() => loadConfig([], { QDRANT__WORKER_LIMITS__TASK_TIMEOUT_SEC: '0' }), /invalid worker_limits.task_timeout_sec: 0/);
  t.throws(() => loadConfig([], { QDRANT__WORKER_LIMITS__DEADLINE_GRACE_SEC: 'soon' }), /invalid worker_limits.deadline_grace_sec: soon/);
  t.throws(() => loadConfig([], { QDRANT__SERVICE__SHUTDOWN_TIMEOUT_SEC: '-1' }), /invalid service.shutdown_timeout_sec: -1/);
});

t.test('loopback detection', async (t) => {
  t.ok(isLoopback('127.0.0.1'));
  t.ok(isLoopback('localhost'));
  t.ok(isLoopback('::1'));
  t.notOk(isLoopback('0.0.0.0'));
});
