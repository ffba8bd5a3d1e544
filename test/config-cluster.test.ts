// Distributed mode's configuration, in process: Qdrant's `cluster` section and `service.grpc_port`
// (defaults, YAML, QDRANT__CLUSTER__... variables), the peer's start arguments --uri, --bootstrap,
// --reinit with QDRANT_URI / QDRANT_BOOTSTRAP, unknown QDRANT__ keys, and Qdrant's log filter.

import t, { type Test } from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { ConfigError } from '../src/config/config-error.js';
import { parseLogFilter } from '../src/config/log-filter.js';

/** Asserts that loading refuses to start: a ConfigError whose message matches. */
function refuses(t: Test, argv: string[], env: NodeJS.ProcessEnv, message: RegExp): void {
  try {
    loadConfig(argv, env);
    t.fail(`${argv.join(' ')} ${JSON.stringify(env)}: accepted`);
  } catch (err) {
    t.ok(err instanceof ConfigError, `${(err as Error).message}: a ConfigError`);
    t.match((err as Error).message, message);
  }
}

t.test('defaults are Qdrant\'s: single node, p2p 6335, gRPC 6334, its timeouts and ticks', async (t) => {
  const config = loadConfig([], {});
  t.same(config.cluster, {
    enabled: false,
    peer_id: null,
    grpc_timeout_ms: 60_000,
    connection_timeout_ms: 2_000,
    p2p: { port: 6335, enable_tls: false },
    consensus: { tick_period_ms: 100, bootstrap_timeout_sec: 15 },
    etcd: { endpoints: [], advertise_port: null },
  });
  t.equal(config.service.grpc_port, 6334);
  t.same(config.peer, { uri: null, bootstrap: null, reinit: false });
  t.equal(config.log_level, 'INFO');
});

t.test('the cluster section from the environment, through QDRANT__SECTION__KEY', async (t) => {
  const config = loadConfig([], {
    QDRANT__CLUSTER__ENABLED: 'true',
    QDRANT__CLUSTER__PEER_ID: '42',
    QDRANT__CLUSTER__GRPC_TIMEOUT_MS: '5000',
    QDRANT__CLUSTER__CONNECTION_TIMEOUT_MS: '500',
    QDRANT__CLUSTER__P2P__PORT: '7335',
    QDRANT__CLUSTER__P2P__ENABLE_TLS: 'false',
    QDRANT__CLUSTER__CONSENSUS__TICK_PERIOD_MS: '50',
    QDRANT__CLUSTER__CONSENSUS__BOOTSTRAP_TIMEOUT_SEC: '30',
    QDRANT__SERVICE__GRPC_PORT: '7334',
  });
  t.same(config.cluster, {
    enabled: true,
    peer_id: 42,
    grpc_timeout_ms: 5000,
    connection_timeout_ms: 500,
    p2p: { port: 7335, enable_tls: false },
    consensus: { tick_period_ms: 50, bootstrap_timeout_sec: 30 },
    etcd: { endpoints: [], advertise_port: null },
  });
  t.equal(config.service.grpc_port, 7334);
  t.same(loadConfig([], { QDRANT__CLUSTER__ETCD__ENDPOINTS: 'http://etcd-1:2379, http://etcd-2:2379' }).cluster.etcd.endpoints, ['http://etcd-1:2379', 'http://etcd-2:2379'], 'a comma-separated list');
  t.same(loadConfig([], { QDRANT__CLUSTER__ETCD__ENDPOINTS: '' }).cluster.etcd.endpoints, [], 'an empty variable: no external etcd');
  t.equal(loadConfig([], { QDRANT__CLUSTER__ETCD__ADVERTISE_PORT: '7444' }).cluster.etcd.advertise_port, 7444, 'the etcd member advertised on another port than it listens on');
});

t.test('the cluster section from the YAML file, the environment over it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'config.yaml');
  await writeFile(file, [
    'cluster:',
    '  enabled: true',
    '  p2p:',
    '    port: 8335',
    '  consensus:',
    '    tick_period_ms: 200',
    'service:',
    '  grpc_port: 8334',
    '',
  ].join('\n'));
  const fromFile = loadConfig(['--config-path', file], {});
  t.equal(fromFile.cluster.enabled, true);
  t.equal(fromFile.cluster.p2p.port, 8335);
  t.equal(fromFile.cluster.p2p.enable_tls, false, 'what the file does not set keeps its default');
  t.equal(fromFile.cluster.consensus.tick_period_ms, 200);
  t.equal(fromFile.cluster.consensus.bootstrap_timeout_sec, 15);
  t.equal(fromFile.service.grpc_port, 8334);
  const overridden = loadConfig(['--config-path', file], { QDRANT__CLUSTER__P2P__PORT: '9335', QDRANT__CLUSTER__ENABLED: 'false' });
  t.equal(overridden.cluster.p2p.port, 9335);
  t.equal(overridden.cluster.enabled, false);
});

t.test('--uri, --bootstrap, --reinit and QDRANT_URI / QDRANT_BOOTSTRAP: a flag wins over its variable', async (t) => {
  const env = { QDRANT_URI: 'http://from-env:6335', QDRANT_BOOTSTRAP: 'http://seed-env:6335' };
  t.same(loadConfig([], env).peer, { uri: 'http://from-env:6335/', bootstrap: 'http://seed-env:6335/', reinit: false }, 'from the environment, printed as Qdrant prints a URI');
  t.same(loadConfig(['--uri', 'http://from-flag:6335', '--bootstrap', 'https://seed-flag:7000', '--reinit'], env).peer,
    { uri: 'http://from-flag:6335/', bootstrap: 'https://seed-flag:7000/', reinit: true });
  t.same(loadConfig(['--uri=http://10.1.2.3:6335/'], { QDRANT_BOOTSTRAP: 'http://seed:6335' }).peer,
    { uri: 'http://10.1.2.3:6335/', bootstrap: 'http://seed:6335/', reinit: false }, 'one from a flag, the other from its variable');
  t.same(loadConfig([], { QDRANT_URI: '', QDRANT_BOOTSTRAP: '' }).peer, { uri: null, bootstrap: null, reinit: false }, 'an empty variable is unset');
  t.same(loadConfig(['--reinit'], {}).peer, { uri: null, bootstrap: null, reinit: true });
});

t.test('unknown QDRANT__ keys are ignored, as Qdrant ignores them', async (t) => {
  const plain = loadConfig([], {});
  const withUnknown = loadConfig([], {
    QDRANT__X__Y: '1',
    QDRANT__NO_SUCH_SECTION: 'yes',
    QDRANT__CLUSTER__NO_SUCH_KEY: '1',
    // Qdrant settings Quiver has no use for.
    QDRANT__CLUSTER__P2P__CONNECTION_POOL_SIZE: '4',
    QDRANT__CLUSTER__CONSENSUS__COMPACT_WAL_ENTRIES: '64',
    QDRANT__CLUSTER__RESHARDING_ENABLED: 'true',
    QDRANT__SERVICE__ENABLE_CORS: 'false',
    QDRANT_DEBUG: '1',
  });
  t.same(withUnknown, plain);
});

t.test('bad cluster settings and arguments refuse to start, naming what is wrong', async (t) => {
  refuses(t, ['--uri', 'peer-1:6335'], {}, /^invalid --uri: peer-1:6335 \(an absolute http:\/\/ or https:\/\/ URI, e\.g\. http:\/\/peer-1:6335\)$/);
  refuses(t, [], { QDRANT_URI: 'not a uri' }, /^invalid --uri: not a uri/);
  refuses(t, [], { QDRANT_BOOTSTRAP: 'ftp://seed:6335' }, /^invalid --bootstrap: ftp:\/\/seed:6335/);
  refuses(t, ['--bootstrap'], {}, /--bootstrap/);
  refuses(t, [], { QDRANT__CLUSTER__PEER_ID: '0' }, /^invalid cluster\.peer_id: 0 \(a whole number from 1 to 9007199254740991\)$/);
  refuses(t, [], { QDRANT__CLUSTER__PEER_ID: String(2 ** 53) }, /^invalid cluster\.peer_id: 9007199254740992/);
  refuses(t, [], { QDRANT__CLUSTER__PEER_ID: '1.5' }, /^invalid cluster\.peer_id: 1\.5/);
  t.equal(loadConfig([], { QDRANT__CLUSTER__PEER_ID: String(2 ** 53 - 1) }).cluster.peer_id, 2 ** 53 - 1, 'the largest peer id');
  refuses(t, [], { QDRANT__CLUSTER__P2P__PORT: '70000' }, /^invalid cluster\.p2p\.port: 70000 \(a port from 1 to 65535\)$/);
  refuses(t, [], { QDRANT__SERVICE__GRPC_PORT: '0' }, /^invalid service\.grpc_port: 0/);
  refuses(t, [], { QDRANT__CLUSTER__ENABLED: 'yes please' }, /^invalid cluster\.enabled: yes please \(true or false\)$/);
  refuses(t, [], { QDRANT__CLUSTER__P2P__ENABLE_TLS: '1' }, /^invalid cluster\.p2p\.enable_tls: 1/);
  refuses(t, [], { QDRANT__CLUSTER__GRPC_TIMEOUT_MS: '0' }, /^invalid cluster\.grpc_timeout_ms: 0/);
  refuses(t, [], { QDRANT__CLUSTER__CONNECTION_TIMEOUT_MS: '-5' }, /^invalid cluster\.connection_timeout_ms: -5/);
  refuses(t, [], { QDRANT__CLUSTER__CONSENSUS__TICK_PERIOD_MS: '0' }, /^invalid cluster\.consensus\.tick_period_ms: 0/);
  refuses(t, [], { QDRANT__CLUSTER__CONSENSUS__BOOTSTRAP_TIMEOUT_SEC: 'soon' }, /^invalid cluster\.consensus\.bootstrap_timeout_sec: soon/);
  refuses(t, [], { QDRANT__CLUSTER__ETCD__ENDPOINTS: 'http://ok:2379,etcd-2:2379' }, /^invalid cluster\.etcd\.endpoints: etcd-2:2379/);
  refuses(t, [], { QDRANT__CLUSTER__ETCD__ENDPOINTS: '{a: 1}' }, /^invalid cluster\.etcd\.endpoints: \{"a":1\}/);
  refuses(t, [], { QDRANT__CLUSTER__ETCD__ADVERTISE_PORT: '0' }, /^invalid cluster\.etcd\.advertise_port: 0 \(a port from 1 to 65535\)$/);
  refuses(t, [], { QDRANT__LOG_LEVEL__X: 'INFO' }, /^invalid log_level/);
});

t.test('cluster mode needs three distinct ports and a gRPC port', async (t) => {
  const cluster = { QDRANT__CLUSTER__ENABLED: 'true' };
  t.equal(loadConfig([], cluster).cluster.enabled, true, 'the defaults 6333, 6334, 6335 do');
  refuses(t, [], { ...cluster, QDRANT__CLUSTER__P2P__ENABLE_TLS: 'true' }, /^cluster\.p2p\.enable_tls is not supported by this server/);
  t.same(loadConfig([], { ...cluster, QDRANT__CLUSTER__ETCD__ENDPOINTS: 'http://etcd-1:2379' }).cluster.etcd.endpoints, ['http://etcd-1:2379'], 'an external etcd');
  refuses(t, ['--port', '6335'], cluster, /^service\.http_port and cluster\.p2p\.port are both 6335: a peer needs a port for each$/);
  refuses(t, [], { ...cluster, QDRANT__SERVICE__GRPC_PORT: '6335' }, /^service\.grpc_port and cluster\.p2p\.port are both 6335/);
  const dir = await mkdtemp(join(tmpdir(), 'quiver-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const noGrpc = join(dir, 'config.yaml');
  await writeFile(noGrpc, 'service:\n  grpc_port: null\n');
  refuses(t, ['--config-path', noGrpc], cluster, /^cluster mode needs service\.grpc_port: the etcd member of each peer talks to the others on it$/);
  t.equal(loadConfig(['--config-path', noGrpc], {}).service.grpc_port, null, 'a single node may go without one');
  t.equal(loadConfig(['--port', '6335'], {}).service.http_port, 6335, 'a single node opens no p2p port');
});

t.test('log_level: Qdrant\'s filter syntax to the logger\'s level', async (t) => {
  const table: Array<[filter: string, level: string, ignored: string[]]> = [
    ['INFO', 'info', []],
    ['debug', 'debug', []],
    ['Warn', 'warn', []],
    ['ERROR', 'error', []],
    ['trace', 'trace', []],
    ['OFF', 'silent', []],
    ['INFO,raft::raft=warn', 'info', []],
    ['INFO,raft::raft=warn,actix_web=debug', 'info', []],
    ['raft::raft=warn,debug', 'debug', []],
    // The last bare level counts (Qdrant searches the items from the end).
    ['warn,debug', 'debug', []],
    // No bare level: Qdrant's INFO.
    ['raft=debug', 'info', []],
    ['', 'info', []],
    ['storage', 'info', []],
    // Not a level name: a target (tracing reads `verbose` as one), so INFO.
    ['verbose', 'info', []],
    ['raft=3,error', 'error', []],
    // Directives tracing cannot parse are skipped with a warning, never refused.
    ['warn,raft=loud', 'warn', ['raft=loud']],
    ['h2=,DEBUG', 'debug', ['h2=']],
  ];
  for (const [filter, level, ignored] of table) {
    const parsed = parseLogFilter(filter);
    t.same({ level: parsed.level, ignored: parsed.ignored }, { level, ignored }, `"${filter}"`);
  }
  // The access log (target actix_web::middleware::logger, INFO): the longest matching target decides, else the level.
  const access: Array<[filter: string, written: boolean]> = [
    ['INFO', true],
    ['debug', true],
    ['WARN', false],
    ['OFF', false],
    ['INFO,raft::raft=warn', true],
    ['INFO,actix_web=warn', false],
    ['INFO,actix_web::middleware::logger=error', false],
    ['WARN,actix_web=info', true],
    ['WARN,actix_web::middleware::logger=4', true],
    ['INFO,actix_web=warn,actix_web::middleware::logger=info', true],
    ['INFO,actix_web::middleware::logger=off,actix_web=debug', false],
    ['INFO,actix_web::middleware::logger=warn,actix_web::middleware::logger=info', true],
    // Not its target: a sibling, a longer name sharing the text, an unparsable level.
    ['INFO,actix_web::middleware::compress=warn', true],
    ['INFO,actix_webx=warn', true],
    ['INFO,actix_web=loud', true],
    ['WARN,actix_web[request]=info', true],
  ];
  for (const [filter, written] of access) t.equal(parseLogFilter(filter).accessLog, written, `access log with "${filter}"`);
  t.equal(loadConfig([], { QDRANT__LOG_LEVEL: 'INFO,raft::raft=warn' }).log_level, 'INFO,raft::raft=warn', 'kept as text');
  t.equal(loadConfig([], { QDRANT__LOG_LEVEL: 'a: b' }).log_level, 'a: b', 'not read as YAML');
});

t.test('storage.node_type: Normal by default, Listener from the environment, anything else refused', async (t) => {
  t.equal(loadConfig([], {}).storage.node_type, 'Normal');
  t.equal(loadConfig([], { QDRANT__STORAGE__NODE_TYPE: 'Listener' }).storage.node_type, 'Listener');
  refuses(t, [], { QDRANT__STORAGE__NODE_TYPE: 'listener' }, /^invalid storage\.node_type: listener \(Normal or Listener\)$/);
});
