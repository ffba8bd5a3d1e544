// A loopback port nothing listens on at the moment of asking: for a process Quiver starts that
// cannot report the port it bound (a peer's etcd member), and for test and benchmark servers.

import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
