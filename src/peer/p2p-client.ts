// The sending side of the p2p routes: one undici pool per peer (kept-alive connections), each
// request carrying the API key, the wire format and the control-plane revision this peer has
// applied. Two kinds of failure come back, as the replica sets tell them apart (a 5xx Quiver error
// is a replica failure, worth asking another replica; anything below is the answer itself):
//   - the peer could not be reached or did not answer in time (refused, reset, timed out):
//     PeerUnreachable (500, Qdrant's service error), counted per peer URI as Qdrant's `message_send_failures`;
//   - the peer answered with an error: raised again as the error it raised, status and message
//     kept (a replica it cannot serve is a 500 ReplicaUnavailable, src/peer/wire.ts).

import { Pool } from 'undici';
import { fromWire, QuiverError, type WireError } from '../errors.js';
import type { DeadlineBudget } from '../shard/deadline.js';
import type { ForwardedUpdate, ReplicaResult, ReplicaTask } from '../replica/replica.js';
import type { ShardId } from '../replica/shard-id.js';
import {
  CONTENT_TYPE, decode, encode, encodeFrames, PEER_HEADER, REVISION_HEADER, shardRoute, WIRE_FORMAT, WIRE_FORMAT_HEADER,
  type Answer, type ApplyAnswer, type RunRequest,
} from './wire.js';

export interface P2pClientOptions {
  /** `cluster.connection_timeout_ms`: how long establishing a connection to a peer may take. */
  connectionTimeoutMs: number;
  /** `cluster.grpc_timeout_ms`: how long a peer may take to answer a request. */
  requestTimeoutMs: number;
  /** `service.api_key`, sent to every peer (all peers of a deployment share it). */
  apiKey: string | null;
  /** The control-plane revision this peer has applied, sent with each request. */
  appliedRevision: () => number;
  /** This peer's id, sent with each request (absent: not sent). */
  peerId?: number;
}

/** Qdrant's `MessageSendErrors` of one peer URI, as `/cluster` shows it. */
export interface SendFailures {
  count: number;
  latest_error: string | null;
  /** RFC 3339. */
  latest_error_timestamp: string | null;
}

/** The peer could not be reached, or did not answer in time: a replica failure. */
export class PeerUnreachable extends QuiverError {
  // Qdrant answers a service error (its "Service internal error" prefix) with 500.
  readonly statusCode = 500;
  readonly kind = 'ServiceError';
  constructor(readonly uri: string, reason: string) {
    super(`Service internal error: failed to reach peer ${uri}: ${reason}`);
  }
}

/** A request to a peer, and its answer as it came. */
export interface PeerRequest {
  method: 'GET' | 'POST';
  /** Path and query, from the root of the peer's p2p URI. */
  path: string;
  body?: Buffer;
  contentType?: string;
  /** Overrides the request timeout for this request. */
  timeoutMs?: number;
}

export interface PeerAnswer {
  statusCode: number;
  contentType: string | null;
  body: Buffer;
}

export class P2pClient {
  private readonly pools = new Map<string, Pool>();
  private readonly failures = new Map<string, SendFailures>();
  private closed = false;

  constructor(private readonly options: P2pClientOptions) {}

  private poolOf(uri: string): Pool {
    const origin = new URL(uri).origin;
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connect: { timeout: this.options.connectionTimeoutMs } });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /**
   * Sends `request` to the peer at `uri` and answers what it answered, whatever the status.
   * Throws PeerUnreachable (and counts a send failure) when no answer came; an answer clears the
   * peer's failures, as Qdrant forgets them on a successful send.
   */
  async send(uri: string, request: PeerRequest): Promise<PeerAnswer> {
    if (this.closed) throw new PeerUnreachable(uri, 'the p2p client is closed');
    const timeout = request.timeoutMs ?? this.options.requestTimeoutMs;
    const headers: Record<string, string> = { [WIRE_FORMAT_HEADER]: WIRE_FORMAT, [REVISION_HEADER]: String(this.options.appliedRevision()) };
    if (this.options.apiKey) headers['api-key'] = this.options.apiKey;
    if (this.options.peerId !== undefined) headers[PEER_HEADER] = String(this.options.peerId);
    if (request.contentType) headers['content-type'] = request.contentType;
    try {
      const answer = await this.poolOf(uri).request({ method: request.method, path: request.path, headers, body: request.body, headersTimeout: timeout, bodyTimeout: timeout });
      const body = Buffer.from(await answer.body.arrayBuffer());
      this.failures.delete(uri);
      const contentType = answer.headers['content-type'];
      return { statusCode: answer.statusCode, contentType: typeof contentType === 'string' ? contentType : null, body };
    } catch (err) {
      const reason = err instanceof Error ? err.message || (err as { code?: string }).code || err.name : String(err);
      this.recordFailure(uri, reason);
      throw new PeerUnreachable(uri, reason);
    }
  }

  private recordFailure(uri: string, error: string): void {
    const entry = this.failures.get(uri) ?? { count: 0, latest_error: null, latest_error_timestamp: null };
    this.failures.set(uri, { count: entry.count + 1, latest_error: error, latest_error_timestamp: new Date().toISOString() });
  }

  /** Send failures per peer URI since the last answer from that peer (Qdrant's `message_send_failures`). */
  sendFailures(): Record<string, SendFailures> {
    return Object.fromEntries([...this.failures].map(([uri, f]) => [uri, { ...f }]));
  }

  /** POSTs a wire body to a p2p route and answers the decoded answer, or raises the peer's error. */
  private async post<A extends object>(uri: string, path: string, body: Buffer, timeoutMs?: number): Promise<A> {
    const answer = await this.send(uri, { method: 'POST', path, body, contentType: CONTENT_TYPE, timeoutMs });
    if (answer.contentType !== CONTENT_TYPE) {
      // Not from a p2p route (a proxy, or something other than a Quiver peer on that port): the
      // replica was not reached, whatever the status says.
      throw fromWire({ quiverError: 'ServiceError', statusCode: 502, message: `Service internal error: peer ${uri} answered ${answer.statusCode} ${answer.body.toString('utf8', 0, 200)}` });
    }
    const decoded = decode<A | { error: WireError }>(answer.body);
    if ('error' in decoded) throw fromWire(decoded.error);
    return decoded;
  }

  /**
   * Runs one task on the peer's replica of `shard`. A read waits as long as its deadline allows
   * (plus the time to connect), if that is longer than the request timeout: the peer answers the
   * timeout error itself when the deadline passes.
   */
  async run<T extends ReplicaTask>(uri: string, shard: ShardId, task: T, deadline: DeadlineBudget | null): Promise<ReplicaResult<T>> {
    const request: RunRequest = { task, deadline };
    const timeoutMs = deadline ? Math.max(this.options.requestTimeoutMs, deadline.remainingMs + this.options.connectionTimeoutMs) : undefined;
    return (await this.post<{ ok: ReplicaResult<T> }>(uri, shardRoute(shard.collection, shard.shard, 'run'), encode(request), timeoutMs)).ok;
  }

  /** Sends a batch of encoded updates (wire.encode of each) for the peer's replica of `shard`; one answer each, in order. */
  async apply(uri: string, shard: ShardId, updates: readonly Uint8Array[]): Promise<Answer<null>[]> {
    const answer = await this.post<ApplyAnswer>(uri, shardRoute(shard.collection, shard.shard, 'apply'), encodeFrames(updates));
    if (answer.replies.length !== updates.length) throw fromWire({ quiverError: 'ServiceError', statusCode: 502, message: `Service internal error: peer ${uri} answered ${answer.replies.length} of ${updates.length} updates` });
    return answer.replies;
  }

  /** Hands an update to the peer leading `shard`'s replicas; answers the operation id it gave it. */
  async forward(uri: string, shard: ShardId, update: ForwardedUpdate): Promise<number> {
    return (await this.post<{ ok: number }>(uri, shardRoute(shard.collection, shard.shard, 'forward'), encode(update))).ok;
  }

  /** Closes every pool once its requests are answered; later sends fail. */
  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }
}
