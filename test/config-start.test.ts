// The configuration as a started server sees it (src/main.ts in a child process): Qdrant's log
// filter syntax, unknown QDRANT__ keys, `cluster.peer_id`, and the refusals with exit status 2
// (a bad setting or argument; cluster mode, which this build does not run yet).

import t from 'tap';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { call, resultOf, stopAtEnd } from './helpers/api-http.js';
import { outputMatch, startServer, tempStorage } from './helpers/server.js';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const EXIT_WITHIN_MS = 60_000;

/** Runs src/main.ts until it exits (killed past the bound): its exit status and everything it printed. */
async function runToExit(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const storage = await tempStorage();
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--storage-path', storage, '--workers', '1', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const bound = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS);
    // 'close' comes after the output streams ended, so the output is complete.
    const code = await new Promise<number | null>((resolve) => child.once('close', (status) => resolve(status)));
    clearTimeout(bound);
    return { code, output };
  } finally {
    await rm(storage, { recursive: true, force: true });
  }
}

t.test('QDRANT__LOG_LEVEL=INFO,raft::raft=warn starts a server that logs at INFO; unknown keys are ignored; cluster.peer_id names it', async (t) => {
  const server = await startServer({
    workers: 1,
    env: {
      QDRANT__LOG_LEVEL: 'INFO,raft::raft=warn',
      QDRANT__X__Y: '1',
      QDRANT__CLUSTER__NO_SUCH_KEY: 'x',
      QDRANT__CLUSTER__PEER_ID: '4242',
      // A single node reads its peer arguments and has no use for them, as Qdrant outside distributed mode.
      QDRANT_URI: 'http://127.0.0.1:6335',
    },
  });
  stopAtEnd(t, server);
  t.ok(await outputMatch(server, /\(Qdrant REST API\) on http:\/\/127\.0\.0\.1:/), 'the start-up line, logged at INFO');
  t.same(resultOf(t, await call(server.url, 'GET', '/cluster')), { status: 'disabled' });
  resultOf(t, await call(server.url, 'PUT', '/collections/c', { vectors: { size: 2, distance: 'Dot' } }));
  t.equal(resultOf<{ peer_id: number }>(t, await call(server.url, 'GET', '/collections/c/cluster')).peer_id, 4242, 'the peer id from cluster.peer_id');
});

t.test('a filter at WARN hides INFO lines and warns of a directive it skips', async (t) => {
  const server = await startServer({ workers: 1, env: { QDRANT__LOG_LEVEL: 'warn,h2=loud' } });
  stopAtEnd(t, server);
  t.ok(await outputMatch(server, /log_level: ignoring `h2=loud`: not a level/), 'the skipped directive, as Qdrant warns of it');
  // Logged after the start-up line: once it is out, the start-up line would be too.
  t.ok(await outputMatch(server, /no API key configured/), 'a WARN line');
  t.notMatch(server.output(), /Qdrant REST API/, 'no INFO line');
});

t.test('one access log line per request in actix-web\'s format, as Qdrant writes it; the filter can silence it', async (t) => {
  const accessLine = /"msg":"127\.0\.0\.1 \\"PUT \/collections\/logged\?wait=true HTTP\/1\.1\\" 200 (\d+) \\"-\\" \\"quiver-test\/1\\" (\d+\.\d{6})"/;
  const request = (server: { url: string }) => fetch(`${server.url}/collections/logged?wait=true`, {
    method: 'PUT', headers: { 'content-type': 'application/json', 'user-agent': 'quiver-test/1' }, body: JSON.stringify({ vectors: { size: 2, distance: 'Dot' } }),
  });
  const info = await startServer({ workers: 1, env: { QDRANT__LOG_LEVEL: 'INFO' } });
  stopAtEnd(t, info);
  const answer = await request(info);
  const body = await answer.text();
  const line = await outputMatch(info, accessLine);
  t.ok(line, 'the access line');
  t.equal(Number(line?.[1]), Buffer.byteLength(body), 'the answer\'s size in bytes');
  t.ok(Number(line?.[2]) < 60, 'seconds taken, six decimals');
  t.notMatch(info.output(), /incoming request|request completed/, 'not Fastify\'s two lines');

  const silenced = await startServer({ workers: 1, env: { QDRANT__LOG_LEVEL: 'INFO,actix_web::middleware::logger=warn' } });
  stopAtEnd(t, silenced);
  await (await request(silenced)).text();
  t.ok(await outputMatch(silenced, /\(Qdrant REST API\)/), 'INFO lines still written');
  // The access line is written as the answer ends; a second request's answer comes after the first's line would have.
  await (await fetch(`${silenced.url}/collections`)).text();
  t.notMatch(silenced.output(), /HTTP\/1\.1\\" \d{3} /, 'no access line');

  const onlyAccess = await startServer({ workers: 1, env: { QDRANT__LOG_LEVEL: 'WARN,actix_web=info' } });
  stopAtEnd(t, onlyAccess);
  await (await request(onlyAccess)).text();
  t.ok(await outputMatch(onlyAccess, accessLine), 'the access line at WARN with actix_web=info');
  t.notMatch(onlyAccess.output(), /\(Qdrant REST API\)/, 'other INFO lines not written');
});

t.test('the first peer of a cluster needs --uri: exit 2 and why', async (t) => {
  const { code, output } = await runToExit([], { QDRANT__CLUSTER__ENABLED: 'true' });
  t.equal(code, 2);
  t.match(output, /^Cannot start the cluster peer: the first peer of a cluster needs its own address: start it with --uri http:\/\/<host>:<p2p port>$/m);
});

t.test('a bad setting or argument stops the start with exit 2 and the reason, no stack trace', async (t) => {
  const badUri = await runToExit(['--uri', 'peer-1:6335'], {});
  t.equal(badUri.code, 2);
  t.equal(badUri.output.trim(), 'Cannot start: invalid --uri: peer-1:6335 (an absolute http:// or https:// URI, e.g. http://peer-1:6335)');
  const badPeer = await runToExit([], { QDRANT__CLUSTER__PEER_ID: '0' });
  t.equal(badPeer.code, 2);
  t.equal(badPeer.output.trim(), 'Cannot start: invalid cluster.peer_id: 0 (a whole number from 1 to 9007199254740991)');
  const unknownFlag = await runToExit(['--bogus'], {});
  t.equal(unknownFlag.code, 2);
  t.match(unknownFlag.output.trim(), /^Cannot start: Unknown option '--bogus'/);
});
