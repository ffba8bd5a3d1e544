// Safe defaults at start: without an API key the server will not listen beyond loopback.

import t from 'tap';
import { spawn } from 'node:child_process';
import { tempStorage } from './helpers/server.js';

t.test('no key and a non-loopback address: refuses to start', async (t) => {
  const storage = await tempStorage();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('../src/main.ts', import.meta.url).pathname, '--host', '0.0.0.0', '--port', '0', '--storage-path', storage], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 2, 'exits with an error');
  t.match(output, /Refusing to listen on 0\.0\.0\.0 without an API key/);
});
