// The shard parts this peer serves to the receivers of its `snapshot` transfers (Qdrant's source
// serves a shard snapshot over HTTP, and the receiver downloads it with the source's API key):
// files in `<storage>/cluster/transfer-parts`, each named by a random id, served on the p2p port
// (authenticated as every p2p route is) and removed once the transfer's restore answered. A
// start removes what a previous process left.

import { createReadStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { v4 as randomUUID } from 'uuid';
import { NotFound } from '../errors.js';

const ROUTE = '/p2p/transfer-parts/';
const NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.part$/;

export class TransferParts {
  private constructor(readonly dir: string) {}

  /** The folder under `storagePath`, emptied. */
  static async open(storagePath: string): Promise<TransferParts> {
    const dir = join(storagePath, 'cluster', 'transfer-parts');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return new TransferParts(dir);
  }

  /** A new part's name and the file to write it to. */
  create(): { name: string; path: string } {
    const name = `${randomUUID()}.part`;
    return { name, path: join(this.dir, name) };
  }

  /** Where a peer downloads part `name` from, this peer's p2p URI being `uri`. */
  static url(uri: string, name: string): string {
    return `${uri.replace(/\/+$/, '')}${ROUTE}${name}`;
  }

  remove(path: string): Promise<void> {
    return rm(path, { force: true });
  }

  /** The p2p route serving the parts. */
  route(): (app: FastifyInstance) => Promise<void> {
    return async (app) => {
      app.get<{ Params: { name: string } }>(`${ROUTE}:name`, async (request, reply) => {
        const { name } = request.params;
        const path = join(this.dir, name);
        const size = NAME.test(name) ? await stat(path).then((s) => s.size, () => null) : null;
        if (size === null) throw new NotFound(`no shard part ${name} on this peer`);
        return reply.header('content-type', 'application/octet-stream').header('content-length', size).send(createReadStream(path));
      });
    };
  }
}
