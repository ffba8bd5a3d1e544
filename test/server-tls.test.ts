// TLS: with `service.enable_tls` and PEM files in `tls.cert` / `tls.key`, the service port speaks
// HTTPS only. The certificate is self-signed for 127.0.0.1, made here with openssl.

import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { freePort, startServer, tempStorage } from './helpers/server.js';

const API_KEY = 'tls-test-key';
const dir = await tempStorage();
const certFile = join(dir, 'cert.pem');
const keyFile = join(dir, 'key.pem');
execFileSync('/usr/bin/openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1',
  '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
const ca = await readFile(certFile, 'utf8');

const server = await startServer({
  workers: 1,
  ca,
  env: { QDRANT__SERVICE__ENABLE_TLS: 'true', QDRANT__TLS__CERT: certFile, QDRANT__TLS__KEY: keyFile, QDRANT__SERVICE__API_KEY: API_KEY },
});
t.teardown(() => server.stop());
const trusting = new Agent({ connect: { ca } });

t.test('HTTPS on the service port', async (t) => {
  t.match(server.url, /^https:/);
  const root = await undiciFetch(server.url, { dispatcher: trusting });
  t.equal(root.status, 200);
  t.match(await root.json(), { title: String, version: String }, 'the check request over HTTPS');

  const collections = await undiciFetch(`${server.url}/collections`, { dispatcher: trusting, headers: { 'api-key': API_KEY } });
  t.equal(collections.status, 200);
  t.same((await collections.json() as { result: unknown }).result, { collections: [] });
  const refused = await undiciFetch(`${server.url}/collections`, { dispatcher: trusting });
  t.equal(refused.status, 401, 'the key is still required');
  await refused.arrayBuffer();
});

t.test('no plain HTTP and no untrusted certificate', async (t) => {
  await t.rejects(fetch(server.url.replace('https:', 'http:')), 'plain HTTP gets no HTTP answer');
  await t.rejects(undiciFetch(server.url), 'a client that does not trust the certificate refuses it');
});

t.test('without jwt_rbac a token is just a wrong key', async (t) => {
  const token = await new SignJWT({ access: 'm', exp: Math.floor(Date.now() / 1000) + 600 }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(API_KEY));
  const response = await undiciFetch(`${server.url}/collections`, { dispatcher: trusting, headers: { authorization: `Bearer ${token}` } });
  t.equal(response.status, 401);
  t.same((await response.json() as { status: unknown }).status, { error: 'Invalid API key or JWT' });
});

t.test('enable_tls without certificate files: refuses to start', async (t) => {
  const storage = await tempStorage();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('../src/main.ts', import.meta.url).pathname, '--port', String(await freePort()), '--storage-path', storage, '--snapshots-path', join(storage, 'snapshots'), '--workers', '1'], {
    env: { ...process.env, QDRANT__SERVICE__ENABLE_TLS: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.not(code, 0, 'exits with an error');
  t.match(output, /service\.enable_tls needs tls\.cert and tls\.key/);
});
