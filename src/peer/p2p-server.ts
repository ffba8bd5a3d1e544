// The peer-to-peer side of a peer: an internal HTTP app on the p2p port, apart from the REST
// server (its routes are not Qdrant's, so they are not in the REST route catalogue). It serves
// this peer's local replicas to the other peers: one task, an ordered batch of tagged updates, or
// an update forwarded to this peer as the leader of a shard's replicas. Bodies are `wire.ts`.
// The host (the collection layer) says which replicas this peer holds; the server only checks
// that a request may be served here before handing it on.

import { ClockMap } from '../shard/clock-map.js';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify';
import { FormatError, NotFound, ServiceError, Unauthorized, type QuiverError } from '../errors.js';
import { INVALID_KEY, keyOf, sameKey } from '../key-compare.js';
import { isReadTask } from '../worker/tasks.js';
import { FED_BY_TRANSFER, READABLE, UPDATABLE, type ForwardedUpdate, type ReplicaState, type ShardReplica } from '../replica/replica.js';
import {
  CONTENT_TYPE, decode, decodeFrames, encode, PEER_HEADER, REVISION_HEADER, ReplicaUnavailable, wireErrorOf, WIRE_FORMAT, WIRE_FORMAT_HEADER, wireFormatMismatch,
  type Answer, type ApplyAnswer, type ReplicaUpdate, type RunRequest,
} from './wire.js';

/** States in which this peer's replica takes an update sent to it. */
const TAKES_UPDATES: ReadonlySet<string> = new Set([...UPDATABLE, ...FED_BY_TRANSFER]);

/** This peer's replica of a shard and its state as this peer has applied it. */
export interface LocalShard {
  replica: ShardReplica;
  state: ReplicaState;
  /**
   * The transfer feeding this replica, if one does. Its receiver takes updates only from the
   * transfer's source (`source`), sent once the source applied the transfer's start (`since`), and
   * no batch of another transfer (a batch carries its transfer's clock, `clockId`): anything else
   * is left over from before (an update meant for the replica before it was Dead, a transfer
   * aborted since) and would land among this transfer's batches.
   */
  transfer?: { source: number; since: number; clockId: number };
}

/** What the p2p routes need of the peer they run in. */
export interface P2pHost {
  /** This peer's replica of shard `shard` of `collection`, or null if it holds none (at the revision waited for). */
  localReplica(collection: string, shard: number): LocalShard | null;
  /** Applies an update this peer leads (medium/strong ordering) across the shard's replicas; answers its operation id. */
  forward(collection: string, shard: number, update: ForwardedUpdate): Promise<number>;
  /** Resolves true once this peer applied control-plane revision `revision`, false if `ms` pass first. */
  awaitRevision(revision: number, ms: number): Promise<boolean>;
}

export interface P2pServerOptions {
  host: P2pHost;
  /** `service.api_key`: when set, every request must present it in `api-key` (no read-only key, no JWT). */
  apiKey: string | null;
  /** How long a request waits for this peer to apply the sender's revision. */
  revisionWaitMs: number;
  /** The largest body taken (a batch of point updates); DEFAULT_P2P_BODY_LIMIT if absent. */
  bodyLimitBytes?: number;
  /** More routes on the same app and port (the join, telemetry and quota routes), registered after these. */
  plugins?: readonly FastifyPluginAsync[];
  loggerInstance?: FastifyBaseLogger;
}

/** Twice REST's default request limit (32 MiB): an update's binary form is no larger than its JSON. */
export const DEFAULT_P2P_BODY_LIMIT = 64 * 1024 * 1024;

/** Collection names may be 255 characters, each up to 12 once percent-encoded (as in the REST app). */
const MAX_PARAM_LENGTH = 16 * 1024;

interface ShardParams {
  collection: string;
  shard: string;
}

type ShardRequest = FastifyRequest<{ Params: ShardParams; Body: Buffer }>;

function sendAnswer<T>(reply: FastifyReply, status: number, answer: Answer<T> | ApplyAnswer): FastifyReply {
  return reply.code(status).type(CONTENT_TYPE).send(encode(answer));
}

/** An error Fastify raised on its own (a body too large, a bad content type) as the Quiver error it is. */
function quiverErrorOf(err: FastifyError | QuiverError): QuiverError | FastifyError {
  return 'kind' in err || (err.statusCode ?? 500) >= 500 ? err : new FormatError(err.message, err.statusCode);
}

function revisionOf(request: FastifyRequest): number {
  const header = request.headers[REVISION_HEADER];
  if (header === undefined) return 0;
  const revision = Number(header);
  if (!Number.isSafeInteger(revision) || revision < 0) throw new FormatError(`bad ${REVISION_HEADER} header: ${String(header)}`);
  return revision;
}

function shardOf(request: ShardRequest): number {
  const shard = Number(request.params.shard);
  if (!Number.isSafeInteger(shard) || shard < 0) throw new NotFound(`shard ${request.params.shard}`);
  return shard;
}

/** The routes that serve this peer's replicas. */
function shardRoutes(options: P2pServerOptions): FastifyPluginAsync {
  const { host } = options;

  /** By shard (collection, shard), the clock of the transfer run whose opening its receiver here took, as far as this process saw. */
  const opened = new Map<string, number>();

  /** Waits (bounded) until this peer has seen what the sender had when it sent the request. */
  async function caughtUp(request: FastifyRequest): Promise<void> {
    const revision = revisionOf(request);
    if (revision > 0 && !(await host.awaitRevision(revision, options.revisionWaitMs))) {
      throw new ReplicaUnavailable(`this peer has not applied revision ${revision} within ${options.revisionWaitMs} ms`);
    }
  }

  /** This peer's replica, in a state to serve `use` (reads need a readable one, updates an updatable one). */
  function replicaFor(request: ShardRequest, use: 'read' | 'update' | 'other'): ShardReplica {
    const shard = shardOf(request);
    const { collection } = request.params;
    const local = host.localReplica(collection, shard);
    if (local === null) throw new ReplicaUnavailable(`no replica of shard ${shard} of collection ${collection} on this peer`);
    // A transfer's receiver takes updates from its source alone (checked below).
    const states = use === 'read' ? READABLE : use === 'update' ? TAKES_UPDATES : null;
    if (states && !states.has(local.state)) throw new ReplicaUnavailable(`the replica of shard ${shard} of collection ${collection} on this peer is ${local.state}`);
    const transfer = local.transfer;
    if (use === 'update' && transfer !== undefined && (revisionOf(request) < transfer.since || request.headers[PEER_HEADER] !== String(transfer.source))) {
      throw new ReplicaUnavailable(`the replica of shard ${shard} of collection ${collection} on this peer takes updates from peer ${transfer.source} sent from revision ${transfer.since} on`);
    }
    return local.replica;
  }

  return async (app) => {
    app.addHook('preHandler', async (request) => {
      const format = request.headers[WIRE_FORMAT_HEADER];
      if (format !== WIRE_FORMAT) throw wireFormatMismatch(Array.isArray(format) ? format.join(', ') : format);
      await caughtUp(request);
    });

    app.post('/p2p/shards/:collection/:shard/run', async (request: ShardRequest, reply) => {
      const { task, deadline } = decode<RunRequest>(request.body);
      // A dry run is how a replica set checks an update before applying it: a read of the shard.
      const reads = isReadTask(task) || (task.type === 'apply' && task.dryRun);
      const replica = replicaFor(request, reads ? 'read' : task.type === 'apply' ? 'update' : 'other');
      // A restore only from a part its snapshot transfer's source serves, sent once the source applied the transfer's start.
      if (task.type === 'restore') {
        const transfer = host.localReplica(request.params.collection, shardOf(request))?.transfer;
        if (!('url' in task.part) || transfer === undefined || request.headers[PEER_HEADER] !== String(transfer.source) || revisionOf(request) < transfer.since) {
          throw new ReplicaUnavailable('a restore from a peer that is not feeding this replica by a snapshot transfer');
        }
      }
      return sendAnswer(reply, 200, { ok: await replica.run(task, deadline) });
    });

    app.post('/p2p/shards/:collection/:shard/apply', async (request: ShardRequest, reply) => {
      const updates = decodeFrames(request.body).map((frame) => decode<ReplicaUpdate>(frame));
      const replica = replicaFor(request, 'update');
      // A transfer's batch (a negative clock id) only into the receiver of that very transfer;
      // a `wal_delta` replays its source's log as it is, older transfers' batches included.
      const transfer = host.localReplica(request.params.collection, shardOf(request))?.transfer;
      if (updates.some((u) => u.clock.clockId < 0 && u.clock.clockId !== transfer?.clockId && !(u.replay === true && transfer !== undefined))) throw new ReplicaUnavailable('a batch of a transfer that no longer runs');
      if (transfer === undefined) return sendAnswer(reply, 200, { replies: await applyAll(replica, updates) });
      // A transfer's receiver takes no update its source passes on before the run's opening (the
      // first tick of its clock: a stream's clearing, the close of a snapshot or a delta): such an
      // update was queued by an earlier run of the transfer, and the run's copy, read after the
      // source applied it, supersedes it. Taking it would give the receiver a tick past what it
      // still misses, which its recovery point would then claim: it is answered and not applied.
      // Whether the opening was taken is the receiver's clock map (durable, unlike this peer's
      // memory of it), read once per run.
      const key = `${request.params.collection}\u0000${shardOf(request)}`;
      const isOpen = () => opened.get(key) === transfer.clockId;
      const openingTag = { peer: transfer.source, clockId: transfer.clockId, tick: 1 };
      const opening = updates.findIndex((u) => u.clock.clockId === transfer.clockId && u.clock.tick === 1);
      const passedOn = (u: ReplicaUpdate, i: number) => u.clock.clockId >= 0 && u.replay !== true && (opening < 0 || i < opening);
      if (!isOpen() && updates.some(passedOn)) {
        const { clocks } = await replica.run({ type: 'recovery_point' }, null);
        if (new ClockMap(clocks).covers(openingTag)) opened.set(key, transfer.clockId);
      }
      const superseded = isOpen() ? () => false : passedOn;
      const taken = (list: readonly ReplicaUpdate[], from: number) => applyAll(replica, list.filter((u, i) => !superseded(u, from + i)))
        .then((answers) => list.map((u, i) => (superseded(u, from + i) ? { ok: null } : answers.shift()!)));
      if (opening < 0) return sendAnswer(reply, 200, { replies: await taken(updates, 0) });
      const before = await taken(updates.slice(0, opening + 1), 0);
      if ('error' in before[opening]) return sendAnswer(reply, 200, { replies: [...before, ...updates.slice(opening + 1).map(() => before[opening])] });
      opened.set(key, transfer.clockId);
      return sendAnswer(reply, 200, { replies: [...before, ...(await applyAll(replica, updates.slice(opening + 1)))] });
    });

    app.post('/p2p/shards/:collection/:shard/forward', async (request: ShardRequest, reply) => {
      const update = decode<ForwardedUpdate>(request.body);
      return sendAnswer(reply, 200, { ok: await host.forward(request.params.collection, shardOf(request), update) });
    });
  };
}

/** Refuses a request without the API key when one is configured; compared in constant time, as REST does. */
function registerKeyCheck(app: FastifyInstance, apiKey: string | null): void {
  const expected = keyOf(apiKey);
  if (expected === null) return;
  app.addHook('onRequest', async (request) => {
    const presented = request.headers['api-key'];
    if (typeof presented !== 'string' || !sameKey(expected, Buffer.from(presented))) throw new Unauthorized(INVALID_KEY);
  });
}

/** The p2p app, not listening yet: this peer's shard routes, then `options.plugins`. */
export function buildP2pApp(options: P2pServerOptions): FastifyInstance {
  const app = Fastify({
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_P2P_BODY_LIMIT,
    routerOptions: { caseSensitive: true, maxParamLength: MAX_PARAM_LENGTH },
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: false }),
  });
  app.addContentTypeParser(CONTENT_TYPE, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.setErrorHandler((err: FastifyError | QuiverError, _request, reply) => {
    const error = wireErrorOf(quiverErrorOf(err));
    return sendAnswer(reply, error.statusCode, { error });
  });
  app.setNotFoundHandler((request, reply) => {
    const error = wireErrorOf(new NotFound(`p2p route ${request.method} ${request.url}`));
    return sendAnswer(reply, 404, { error });
  });
  registerKeyCheck(app, options.apiKey);
  app.register(shardRoutes(options));
  for (const plugin of options.plugins ?? []) app.register(plugin);
  return app;
}

/** The p2p app on its port. */
export class P2pServer {
  readonly app: FastifyInstance;

  constructor(options: P2pServerOptions) {
    this.app = buildP2pApp(options);
  }

  /** Listens on `host:port` (port 0: a free one); answers the address bound, as `http://host:port/`. */
  async start(host: string, port: number): Promise<string> {
    await this.app.listen({ host, port });
    const address = this.app.server.address();
    if (address === null || typeof address === 'string') throw new ServiceError(`p2p server bound to ${String(address)}`);
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${shown}:${address.port}/`;
  }

  /** Stops taking requests and closes the connections, once the requests being served are answered. */
  async stop(): Promise<void> {
    await this.app.close();
  }
}

/**
 * Applies updates in order, started in the batch's order and not awaited one by one: the replica
 * keeps the order of the calls and logs a run of queued updates with one synced write.
 */
async function applyAll(replica: ShardReplica, updates: readonly ReplicaUpdate[]): Promise<Answer<null>[]> {
  const outcomes = await Promise.allSettled(updates.map((update) => replica.run(update, null)));
  return outcomes.map((o): Answer<null> => (o.status === 'fulfilled' ? { ok: null } : { error: wireErrorOf(o.reason) }));
}
