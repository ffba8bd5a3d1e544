// `quiver demo` (`npm run demo`): builds the demo, then serves build/demo as static files on
// loopback. Any static host serves the same folder just as well.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { defaultFashionMnistDir } from '../bench/fashion-mnist.js';
import { CommandError } from '../errors.js';
import { helpText, int, parseOptions, type CommandSpec } from '../cli/options.js';
import { buildDemo } from './build.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.bin': 'application/octet-stream',
};

export const DEMO_SPEC: CommandSpec = {
  usage: 'quiver demo [options]',
  summary: 'Builds the browser demo into build/demo and serves it: Quiver\'s WebAssembly engine in a Web Worker indexes\n'
    + 'Fashion-MNIST images in the page; click one to see its nearest neighbours, with a label filter and a distance choice.',
  options: [
    { name: 'port', value: 'N', default: '8080', help: 'port to listen on' },
    { name: 'host', value: 'ADDRESS', default: '127.0.0.1', help: 'address to listen on' },
    { name: 'fashion-mnist-dir', value: 'DIR', default: defaultFashionMnistDir(), help: 'Debian\'s dataset-fashion-mnist files (env QUIVER_FASHION_MNIST_DIR)' },
  ],
};

/** Serves the files under `root`; resolves once listening. */
export function serveStatic(root: string, host: string, port: number): Promise<Server> {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    const info = file.startsWith(root.endsWith(sep) ? root : root + sep) ? await stat(file).catch(() => null) : null;
    if (!info?.isFile() || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(info ? 405 : 404, { 'content-type': 'text/plain' }).end(info ? 'method not allowed\n' : 'not found\n');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': info.size, 'cache-control': 'no-cache' });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

export async function demoCommand(args: string[]): Promise<number> {
  const values = parseOptions(DEMO_SPEC, args);
  if (values.help) {
    console.log(helpText(DEMO_SPEC));
    return 0;
  }
  const built = await buildDemo(String(values['fashion-mnist-dir']));
  if (!built.hasImages) throw new CommandError(`Fashion-MNIST not found in ${values['fashion-mnist-dir']}. Install it with: sudo apt-get install dataset-fashion-mnist`);
  const server = await serveStatic(built.dir, String(values.host), Number(values.port) === 0 ? 0 : int(values, 'port'));
  const { port } = server.address() as { port: number };
  console.log(`Quiver demo on http://${values.host}:${port}/ (serving ${built.dir}); Ctrl-C stops it`);
  await new Promise<void>((resolve) => {
    const stop = () => server.close(() => resolve());
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}
