// A shard's graph store keeps a dense image as the parts the engine wrote it in (one chunk key
// each), so no image is ever joined into one buffer; a shrinking image deletes the chunks it no
// longer uses, and the parts read back load the same index.

import { ClassicLevel } from 'classic-level';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { VectorIndex } from '../src/engine/index.js';
import { GraphStore } from '../src/shard/optimizer/graph-store.js';
import type { VectorSpec } from '../src/shard/shard.js';
import { engineModule } from '../src/runtime/wasm-module.js';
import { clustered, row } from './helpers/data.js';
import { buildIndex } from './helpers/engine.js';

const DIM = 16;
const SPEC: VectorSpec = { name: 'v', size: DIM, distance: 'Euclid', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null };

t.test('dense images are stored and read back as their parts', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-graph-parts-'));
  const db = new ClassicLevel<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  await db.open();
  t.teardown(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });
  const data = clustered(1500 * DIM, DIM, 8, 3);
  const index = await buildIndex({ dim: DIM, distance: 'Euclid' }, data);
  const parts = index.serializeParts(4099);
  const ids = Array.from({ length: 1500 }, (_, i) => i);
  const store = new GraphStore(db);
  await store.write([SPEC], [], { dense: new Map([['v', parts]]), sparse: new Map() }, ids, 5);
  const keys = async () => (await db.keys({ gte: 'g:v:', lt: 'g:v;' }).all()).length;
  t.equal(await keys(), parts.length, `one chunk per part (${parts.length})`);
  const stored = await new GraphStore(db).read([SPEC], []);
  const back = stored!.images.get('v')!;
  t.same(back.map((p) => p.byteLength), parts.map((p) => p.byteLength), 'the parts come back as written');
  const loaded = await VectorIndex.load(await engineModule(), back);
  for (let q = 0; q < 10; q++) t.same(loaded.search(row(data, DIM, q * 7), { limit: 10 }), index.search(row(data, DIM, q * 7), { limit: 10 }), `query ${q}: same answer`);
  // Fewer, larger parts replace them; the chunks past the new count are deleted.
  await store.write([SPEC], [], { dense: new Map([['v', index.serializeParts(50000)]]), sparse: new Map() }, ids, 6);
  t.equal(await keys(), index.serializeParts(50000).length, 'the stale chunks are gone');
  t.ok(Buffer.compare((await VectorIndex.load(await engineModule(), (await new GraphStore(db).read([SPEC], []))!.images.get('v')!)).serialize(), index.serialize()) === 0, 'the larger parts load the same index');
});
