// A loopback port nothing listens on at the moment of asking: for a process Quiver starts that
// cannot report the port it bound (a peer's etcd member), and for test and benchmark servers.
// A port chosen long before its process binds it can be taken meanwhile (another bind to port 0
// may draw it): `reservePort` keeps listening on it until its user is about to bind it.

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

/** A loopback port held by a listening socket of this process until `release`. */
export interface ReservedPort {
  readonly port: number;
  /** Lets go of the port (idempotent): call it right before the process that binds it starts. */
  release(): Promise<void>;
}

/**
 * Reserves a free loopback port other than `avoid` (ports configured for this process that are
 * not bound yet, such as the member's own peer port: the system may offer one of them as free).
 */
export async function reservePort(avoid: readonly number[] = []): Promise<ReservedPort> {
  const refused: ReservedPort[] = [];
  try {
    // Each refused port stays held while the next is drawn, so the same one is not offered again.
    for (let draws = 0; draws <= avoid.length; draws++) {
      const reserved = await holdFreePort();
      if (!avoid.includes(reserved.port)) return reserved;
      refused.push(reserved);
    }
    throw new Error(`no free loopback port outside ${avoid.join(', ')}`);
  } finally {
    await Promise.all(refused.map((r) => r.release()));
  }
}

async function holdFreePort(): Promise<ReservedPort> {
  const holder = createServer();
  const port = await new Promise<number>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port));
  });
  let released: Promise<void> | null = null;
  return {
    port,
    release: () => (released ??= new Promise((resolve) => holder.close(() => resolve()))),
  };
}

/** `count` distinct free loopback ports (all held while they are drawn), for a process that binds several. */
export async function freePorts(count: number): Promise<number[]> {
  const held: ReservedPort[] = [];
  try {
    for (let i = 0; i < count; i++) held.push(await holdFreePort());
    return held.map((r) => r.port);
  } finally {
    await Promise.all(held.map((r) => r.release()));
  }
}
