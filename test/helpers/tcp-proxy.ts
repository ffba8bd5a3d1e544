// A loopback TCP proxy that can cut a network link, for partition tests. Every peer reaches
// another peer's port at the one address that peer advertises, and over loopback every connection
// comes from 127.0.0.1: a proxy in front of a port tells the senders apart by what they send
// first (an HTTP request may name its sender in a header) or, failing that, by the process at the
// other end of the connection, so it can cut one sender off and let the others through.
//
// A cut resets the connections it cuts off (as a link down for longer than TCP's timeouts would
// end them) and holds the new ones without an answer: a blackhole, where the sender waits for its
// own timeout as for packets that go nowhere. A heal forwards what a held connection sent, if its
// sender still waits (or resets it: nothing sent during the cut arrives), and everything new
// passes again.

import { readdir, readFile, readlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** Whom a connection comes from, told from the bytes it sent first and the socket; null when unknown. */
export type SenderOf = (head: string, client: Socket) => string | null | Promise<string | null>;

/** Which senders a cut cuts off (`null`: a sender not told apart). */
export type CutOff = (sender: string | null) => boolean;

/** The first value of header `name` in an HTTP request's head, or null. */
export function httpHeader(head: string, name: string): string | null {
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === name.toLowerCase()) return line.slice(colon + 1).trim();
  }
  return null;
}

function procAddress(port: number): string {
  return `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The inodes of the established sockets connected to 127.0.0.1:`to` (from local port `from`, if given), as /proc/net/tcp lists them. */
async function socketInodes(to: number, from?: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const line of (await readFile('/proc/net/tcp', 'utf8')).split('\n')) {
    const fields = line.trim().split(/\s+/);
    // Field 3 is the TCP state: 01 is ESTABLISHED.
    if (fields[2] === procAddress(to) && fields[3] === '01' && (from === undefined || fields[1] === procAddress(from))) inodes.add(fields[9]);
  }
  return inodes;
}

/** The processes of `pids` that hold one of the sockets `inodes` open. */
async function holders(inodes: Set<string>, pids: readonly number[]): Promise<number[]> {
  if (inodes.size === 0) return [];
  const found: number[] = [];
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
    if (links.some((link) => inodes.has(/^socket:\[(\d+)\]$/.exec(link)?.[1] ?? ''))) found.push(pid);
  }
  return found;
}

/**
 * Which of `pids` holds the other end of a loopback connection the proxy accepted (Linux's /proc:
 * the socket's inode in /proc/net/tcp, then the processes' open files); null when none does, or
 * it is gone already.
 */
export async function connectingProcess(client: Socket, pids: readonly number[]): Promise<number | null> {
  if (client.remotePort === undefined || client.localPort === undefined) return null;
  const [pid] = await holders(await socketInodes(client.localPort, client.remotePort), pids);
  return pid ?? null;
}

/** The processes of `pids` with a connection to 127.0.0.1:`port` (Linux's /proc). */
export async function processesConnectedTo(port: number, pids: readonly number[]): Promise<number[]> {
  return holders(await socketInodes(port), pids);
}

/** An HTTP request's head ends with an empty line; a connection that sends none is told apart after this many bytes. */
const MAX_HEAD_BYTES = 64 * 1024;

interface Link {
  client: Socket;
  sender: string | null;
  /** What the client sent before the link was forwarded (its head, while it is told apart or held). */
  pending: Buffer[];
  upstream: Socket | null;
  /** Cut off when it came: waits for a heal. */
  held: boolean;
  /** Whether its sender was asked for already. */
  told: boolean;
  /** What it sent first (an HTTP request's head): its sender is asked again from it at a cut if it was not known. */
  head: string | null;
  /** Keeps what the client sends until the link is forwarded. */
  collect: (chunk: Buffer) => void;
}

export interface TcpProxyOptions {
  /** Tells a connection's sender; without it every sender is null. */
  senderOf?: SenderOf;
}

export class TcpProxy {
  private readonly links = new Set<Link>();
  private cutOff: CutOff | null = null;
  /** Connections per sender (`unknown`: not told apart), to check that traffic takes this way. */
  readonly seen = new Map<string, number>();
  private resetCount = 0;
  private heldCount = 0;
  private targetPort: number | null = null;

  private constructor(private readonly server: Server, readonly port: number, private readonly options: TcpProxyOptions) {}

  /**
   * Listens on a free loopback port; `forwardTo` tells where to. Started before the ports it
   * forwards to are drawn, it cannot take one of them while they are not bound yet.
   */
  static async start(options: TcpProxyOptions): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = createServer((client) => proxy!.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new TcpProxy(server, (server.address() as { port: number }).port, options);
    return proxy;
  }

  /** Forwards the connections to `port` on 127.0.0.1 from now on. */
  forwardTo(port: number): this {
    this.targetPort = port;
    return this;
  }

  /** This proxy's address, as a peer advertises it. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Connections the cuts reset, and new ones they held. */
  get cuts(): { reset: number; held: number } {
    return { reset: this.resetCount, held: this.heldCount };
  }

  /**
   * Tells apart again the live connections whose sender was not known when they came (opened
   * before the test could tell the processes apart): a cut then knows whose they are.
   */
  async identify(): Promise<void> {
    await Promise.all([...this.links].filter((link) => link.upstream !== null && link.sender === null && link.head !== null).map(async (link) => {
      link.sender = await this.tell(link);
    }));
  }

  /** Cuts the senders `off` chooses (every one by default) off: their live connections are reset, their new ones held. */
  cut(off: CutOff = () => true): void {
    this.cutOff = off;
    for (const link of this.links) {
      if (link.upstream !== null && off(link.sender)) {
        this.resetCount++;
        this.drop(link, true);
      }
    }
  }

  /**
   * Lets everything through again. A held connection whose sender still waits is forwarded, its
   * request delivered late as a link that comes back delivers what was retransmitted meanwhile;
   * or, with `held: 'reset'`, reset, as if nothing sent during the cut ever arrived.
   */
  heal(held: 'forward' | 'reset' = 'forward'): void {
    this.cutOff = null;
    for (const link of this.links) {
      if (!link.held) continue;
      if (held === 'forward') this.forward(link);
      else this.drop(link, true);
    }
  }

  /** Stops listening and ends every connection. */
  async close(): Promise<void> {
    this.cutOff = null;
    for (const link of this.links) this.drop(link);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const link: Link = { client, sender: null, pending: [], upstream: null, held: false, told: false, head: null, collect: () => {} };
    this.links.add(link);
    client.on('error', () => this.drop(link));
    // A held client that gives up closes: it is dropped, and nothing of it is forwarded at the heal.
    client.on('close', () => this.drop(link));
    const senderOf = this.options.senderOf;
    let length = 0;
    link.collect = (chunk: Buffer) => {
      link.pending.push(chunk);
      length += chunk.length;
      if (link.told || senderOf === undefined) return;
      const head = Buffer.concat(link.pending).toString('latin1');
      if (!head.includes('\r\n\r\n') && length < MAX_HEAD_BYTES) return;
      link.told = true;
      link.head = head;
      void this.tell(link).then((sender) => {
        link.sender = sender;
        this.place(link);
      });
    };
    client.on('data', link.collect);
    if (senderOf === undefined) {
      link.told = true;
      this.place(link);
    }
  }

  private tell(link: Link): Promise<string | null> {
    const senderOf = this.options.senderOf;
    if (senderOf === undefined || link.head === null) return Promise.resolve(null);
    return Promise.resolve().then(() => senderOf(link.head!, link.client)).catch(() => null);
  }

  private place(link: Link): void {
    if (!this.links.has(link)) return;
    const key = link.sender ?? 'unknown';
    this.seen.set(key, (this.seen.get(key) ?? 0) + 1);
    if (this.cutOff?.(link.sender)) {
      this.heldCount++;
      link.held = true;
      return;
    }
    this.forward(link);
  }

  private forward(link: Link): void {
    link.held = false;
    link.client.off('data', link.collect);
    if (this.targetPort === null) {
      this.drop(link);
      return;
    }
    const upstream = connect(this.targetPort, '127.0.0.1');
    link.upstream = upstream;
    upstream.on('error', () => this.drop(link));
    upstream.on('close', () => this.drop(link));
    for (const chunk of link.pending) upstream.write(chunk);
    link.pending = [];
    link.client.pipe(upstream);
    upstream.pipe(link.client);
  }

  /** Ends both sides of a link; `reset`: with a TCP reset, as the next packet on a long-dead link gets. */
  private drop(link: Link, reset = false): void {
    if (!this.links.delete(link)) return;
    for (const socket of [link.client, link.upstream]) {
      if (socket === null || socket.destroyed) continue;
      if (reset) socket.resetAndDestroy();
      else socket.destroy();
    }
  }
}
