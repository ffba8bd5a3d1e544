// Snapshot endpoints: full-storage snapshots (/snapshots), collection snapshots
// (/collections/{name}/snapshots) and shard snapshots (/collections/{name}/shards/{id}/snapshots):
// create, list, download, delete, recover from a location, recover from a multipart upload.

import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatError } from '../../api/messages.js';
import { collectionNotFound } from '../../messages.js';
import { SNAPSHOT_PARAMS, SNAPSHOT_UPLOAD_PARAMS, validateBody } from '../../api/validator.js';
import { BadRequest, FormatError } from '../../errors.js';
import { SnapshotFiles } from '../../snapshot/files.js';
import { fetchSnapshot, localFile, type LocalSnapshot } from '../../snapshot/location.js';
import { Snapshots } from '../../snapshot/service.js';
import { accessOf } from '../access.js';
import type { ServerContext } from '../app.js';
import { ok } from '../reply.js';
import { collectionName, query } from './params.js';

type SnapshotParams = { name: string; shard?: string; snapshot?: string };

const params = (request: FastifyRequest): SnapshotParams => request.params as SnapshotParams;

function shardId(request: FastifyRequest): number {
  const raw = params(request).shard!;
  if (!/^[0-9]+$/.test(raw) || Number(raw) > 4_294_967_295) throw formatError(`can not parse "${raw}" to a u32`, 'path parameters');
  return Number(raw);
}

/** `wait=false` answers 202 at once and lets the job finish in the background, as Qdrant does. */
async function answer<T>(request: FastifyRequest, reply: FastifyReply, wait: boolean | undefined, job: () => Promise<T>): Promise<unknown> {
  if (wait !== false) return ok(request, await job());
  job().catch((err: unknown) => request.log.error({ err }, 'snapshot operation failed'));
  return reply.code(202).send({ status: 'accepted', time: ok(request, null).time });
}

function sendFile(reply: FastifyReply, path: string, name: string, removeAfter = false): FastifyReply {
  const stream = createReadStream(path);
  if (removeAfter) stream.once('close', () => void rm(path, { force: true }));
  return reply
    .header('content-type', 'application/octet-stream')
    .header('content-disposition', `attachment; filename="${name.replace(/"/g, '')}"`)
    .send(stream);
}

export function registerSnapshotRoutes(app: FastifyInstance, { config, collections, catalog, node }: ServerContext): void {
  const files = new SnapshotFiles(config.storage.snapshots_path);
  const snapshots = new Snapshots(collections, files, node.peerId, node.snapshots, catalog);
  const uploadLimit = config.service.max_snapshot_upload_mb * 1024 * 1024;

  /** A listed collection's own name; one the caller may not see does not exist for it. */
  const visibleCollection = (request: FastifyRequest): string => {
    const name = collectionName(request);
    if (!collections.exists(name) || !accessOf(request).canSee(collections.resolve(name))) throw collectionNotFound(name);
    return collections.resolve(name);
  };
  const shardDir = (request: FastifyRequest): string => {
    const { name } = snapshots.shardOf(collectionName(request), shardId(request));
    return files.shardDir(name, shardId(request));
  };

  /** A recover body's location: a URL, or (for shards) a file name among the shard's snapshots. */
  const fetchLocation = async (location: string, apiKey: string | null | undefined, shardDir: string | null): Promise<LocalSnapshot> => {
    if (URL.canParse(location)) return fetchSnapshot(new URL(location), apiKey ?? null, config.storage.snapshots_path, await files.tempPath('download'), config.storage.snapshot_download);
    if (shardDir === null) throw formatError('relative URL without a base');
    return localFile(join(shardDir, location), shardDir);
  };

  const tooLarge = (): FormatError => new FormatError(`Payload too large: the snapshot upload exceeds the limit of ${config.service.max_snapshot_upload_mb} MB`, 413);

  /** Streams the multipart field `snapshot` to a temporary file, within the upload limit. */
  const receiveUpload = async (request: FastifyRequest): Promise<LocalSnapshot> => {
    if (!request.isMultipart()) throw new BadRequest('the snapshot must be uploaded as multipart/form-data');
    const path = await files.tempPath('upload');
    try {
      for await (const part of request.parts()) {
        if (part.type !== 'file') continue;
        if (part.fieldname !== 'snapshot') {
          part.file.resume();
          continue;
        }
        await pipeline(part.file, createWriteStream(path, { flags: 'wx' }));
        if (part.file.truncated) throw tooLarge();
        return { path, temporary: true };
      }
    } catch (err) {
      await rm(path, { force: true });
      throw (err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE' ? tooLarge() : err;
    }
    throw new BadRequest('the multipart form holds no file field `snapshot`');
  };

  const download = async (request: FastifyRequest, reply: FastifyReply, dir: string): Promise<FastifyReply> => {
    const name = params(request).snapshot!;
    return sendFile(reply, await files.locate(dir, name), name);
  };
  const remove = async (request: FastifyRequest, reply: FastifyReply, dir: string): Promise<unknown> => {
    const { wait } = query(request, SNAPSHOT_PARAMS);
    const name = params(request).snapshot!;
    await files.locate(dir, name);
    return answer(request, reply, wait, () => files.remove(dir, name).then(() => true));
  };

  // Full-storage snapshots.
  app.get('/snapshots', async (request) => ok(request, await files.list(files.root)));
  app.post('/snapshots', async (request, reply) => answer(request, reply, query(request, SNAPSHOT_PARAMS).wait, () => snapshots.createFullSnapshot()));
  app.get('/snapshots/:snapshot', async (request, reply) => download(request, reply, files.root));
  app.delete('/snapshots/:snapshot', async (request, reply) => remove(request, reply, files.root));

  // Collection snapshots.
  app.get('/collections/:name/snapshots', async (request) => ok(request, await files.list(files.collectionDir(visibleCollection(request)))));
  app.post('/collections/:name/snapshots', async (request, reply) => {
    const { wait } = query(request, SNAPSHOT_PARAMS);
    const name = collections.resolve(collectionName(request));
    return answer(request, reply, wait, () => snapshots.createCollectionSnapshot(name));
  });
  app.get('/collections/:name/snapshots/:snapshot', async (request, reply) => download(request, reply, snapshots.collectionDir(collectionName(request))));
  app.delete('/collections/:name/snapshots/:snapshot', async (request, reply) => remove(request, reply, snapshots.collectionDir(collectionName(request))));
  app.put('/collections/:name/snapshots/recover', async (request, reply) => {
    const { wait } = query(request, SNAPSHOT_PARAMS);
    const body = validateBody('SnapshotRecover', request.body);
    const name = collectionName(request); // checked before the download, which only recoverCollection releases
    const snapshot = await fetchLocation(body.location, body.api_key, null);
    return answer(request, reply, wait, () => snapshots.recoverCollection(name, snapshot, body.checksum, body.priority ?? undefined).then(() => true));
  });

  // Shard snapshots.
  app.get('/collections/:name/shards/:shard/snapshots', async (request) => {
    visibleCollection(request);
    return ok(request, await files.list(shardDir(request)));
  });
  app.post('/collections/:name/shards/:shard/snapshots', async (request, reply) => {
    const { wait } = query(request, SNAPSHOT_PARAMS);
    const shard = shardId(request);
    const { name } = snapshots.shardOf(collectionName(request), shard);
    return answer(request, reply, wait, () => snapshots.createShardSnapshot(name, shard));
  });
  app.get('/collections/:name/shards/:shard/snapshots/:snapshot', async (request, reply) => download(request, reply, shardDir(request)));
  app.delete('/collections/:name/shards/:shard/snapshots/:snapshot', async (request, reply) => remove(request, reply, shardDir(request)));
  // The shard's current state as a snapshot file, streamed once and not kept.
  app.get('/collections/:name/shards/:shard/snapshot', async (request, reply) => {
    const shard = shardId(request);
    const { name } = snapshots.shardOf(collectionName(request), shard);
    return sendFile(reply, await snapshots.packShard(name, shard), `${name}-shard-${shard}.snapshot`, true);
  });
  app.put('/collections/:name/shards/:shard/snapshots/recover', async (request, reply) => {
    const { wait } = query(request, SNAPSHOT_PARAMS);
    const body = validateBody('ShardSnapshotRecover', request.body);
    const shard = shardId(request);
    const name = collectionName(request);
    const dir = shardDir(request);
    const snapshot = await fetchLocation(body.location, body.api_key, dir);
    return answer(request, reply, wait, () => snapshots.recoverShard(name, shard, snapshot, body.checksum, body.priority ?? undefined).then(() => true));
  });

  // Uploads: the only multipart bodies, so the multipart parser exists in this scope only.
  void app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: uploadLimit, files: 1 } });
    scope.post('/collections/:name/snapshots/upload', async (request, reply) => {
      const { wait, checksum, priority } = query(request, SNAPSHOT_UPLOAD_PARAMS);
      const name = collectionName(request);
      const snapshot = await receiveUpload(request);
      return answer(request, reply, wait, () => snapshots.recoverCollection(name, snapshot, checksum, priority).then(() => true));
    });
    scope.post('/collections/:name/shards/:shard/snapshots/upload', async (request, reply) => {
      const { wait, checksum, priority } = query(request, SNAPSHOT_UPLOAD_PARAMS);
      const shard = shardId(request);
      const name = collectionName(request);
      snapshots.shardOf(name, shard);
      const snapshot = await receiveUpload(request);
      return answer(request, reply, wait, () => snapshots.recoverShard(name, shard, snapshot, checksum, priority).then(() => true));
    });
  });
}
