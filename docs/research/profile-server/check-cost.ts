// What one point-by-point filter check costs in process: PointCheck's matcher reading the key
// from 25,000 parsed payload objects (interleaved with other allocations, as a shard's heap is)
// against the same reads from a payload column. Run: node --import tsx docs/research/profile-server/check-cost.ts
import { Bitset } from '../../../src/engine/bitset.js';
import type { Payload } from '../../../src/model.js';
import { PointCheck } from '../../../src/shard/filter/point-check.js';
import type { FilterSource } from '../../../src/shard/filter/select.js';
import { PayloadColumns } from '../../../src/shard/payload-columns.js';

const N = 25000;
const ROUNDS = 40;
const payloads: Payload[] = [];
const others: Float32Array[] = [];
for (let i = 0; i < N; i++) {
  payloads.push(JSON.parse(JSON.stringify({ bucket: i % 10, bucket_plain: i % 10 })) as Payload);
  others.push(new Float32Array(128));
}
const columns = new PayloadColumns(payloads);
const source = (withColumns: boolean): FilterSource => ({
  size: N,
  liveOffsets: () => new Bitset(N),
  payload: (offset) => payloads[offset],
  pointId: (offset) => offset,
  hasVector: () => true,
  offsetOf: () => undefined,
  index: () => undefined,
  ...(withColumns ? { column: (key: string) => columns.column(key) } : {}),
});
const filter = { must: [{ kind: 'field' as const, key: 'bucket_plain', path: [{ key: 'bucket_plain' }], match: { kind: 'value' as const, value: 0 } }] };

for (let round = 0; round < 5; round++) {
  const line: string[] = [];
  for (const withColumns of [false, true]) {
    const match = new PointCheck(source(withColumns), () => undefined).matcher(filter);
    let hits = 0;
    const start = process.hrtime.bigint();
    for (let r = 0; r < ROUNDS; r++) for (let offset = 0; offset < N; offset++) if (match(offset)) hits++;
    const ns = Number(process.hrtime.bigint() - start) / (ROUNDS * N);
    line.push(`${withColumns ? 'column' : 'payload'} ${ns.toFixed(1)} ns/check (${hits / ROUNDS} matches)`);
  }
  console.log(line.join(', '));
}
console.log(`(${others.length} other allocations kept alive)`);
