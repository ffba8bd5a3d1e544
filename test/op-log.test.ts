// The per-shard operation log at unit level, on real shards in temp folders: entries keep every
// operation kind exactly; an operation taken twice (same clock tag, or an older tick) changes
// nothing; wait=false answers once the entry is logged and the apply follows before any read;
// wal_config truncates whole closed segments once applied and keeps wal_retain_closed of them;
// "entries after N" serves catch-up, refuses what truncation removed, and replaying another
// shard's entries (Qdrant's wal_delta) reproduces its points exactly; the recovery point (clock
// map and log extent) survives a reopen.

import t, { type Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard, type ShardSpec } from '../src/shard/shard.js';
import { decodeEntry, encodeEntry, type LogEntry } from '../src/shard/log-entry-codec.js';
import type { ClockTag } from '../src/shard/clock-map.js';
import type { WalSpec } from '../src/shard/op-log.js';
import type { PointRecord, WriteOp } from '../src/shard/write-ops.js';
import type { Payload, PointId } from '../src/model.js';
import { toFilter } from '../src/api/filter.js';

const VECTORS: ShardSpec['vectors'] = [
  { name: 'a', size: 3, distance: 'Euclid', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null },
  { name: 'b', size: 2, distance: 'Dot', m: 16, efConstruct: 100, fullScanThreshold: 10000, quantization: null },
];
/** Segments large enough that nothing is truncated. */
const ROOMY: WalSpec = { capacityBytes: 1 << 20, retainClosed: 1 };

async function folder(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quiver-oplog-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function open(path: string, wal: WalSpec = ROOMY): Promise<Shard> {
  return Shard.open({ path, vectors: VECTORS, sparseVectors: [], indexes: [], wal });
}

const tag = (tick: number, peer = 0, clockId = 0): ClockTag => ({ peer, clockId, tick });

function upsert(id: PointId, a: number[], payload: Payload): WriteOp {
  return { kind: 'upsert', points: [{ id, vectors: { a: new Float32Array(a) }, payload }], mode: 'upsert', updateFilter: null };
}

/** Every live point's record (version included), in id order. */
function records(shard: Shard): PointRecord[] {
  return shard.orderedIds().map((id) => shard.record(id)!);
}

t.test('an entry keeps every operation kind exactly, vectors as stored f32', async (t) => {
  const ops: WriteOp[] = [
    { kind: 'upsert', points: [{ id: 1, vectors: { a: new Float32Array([0.5, -1.25, 3]), b: new Float32Array([0.125, 7]) }, payload: { k: 'x', n: [1, 2] } }, { id: 'a3bb189e-8bf9-3888-9912-ace4e6543002', vectors: {}, payload: null }], mode: 'insert_only', updateFilter: { must: [{ kind: 'field', key: 'k', path: [{ key: 'k' }], match: { kind: 'value', value: 'x' } }] } },
    { kind: 'delete', target: { ids: [1, 2] } },
    { kind: 'set_payload', target: { filter: { must: [{ kind: 'hasId', ids: new Set([3, 'a3bb189e-8bf9-3888-9912-ace4e6543002']) }], mustNot: [{ kind: 'field', key: 'n', path: [{ key: 'n' }], range: { kind: 'number', gte: -Infinity, lt: Infinity } }] } }, payload: { deep: { v: true } }, key: 'p.q' },
    { kind: 'overwrite_payload', target: { ids: [4] }, payload: { only: 1 } },
    { kind: 'delete_payload', target: { ids: [5] }, keys: ['a', 'b.c'] },
    { kind: 'clear_payload', target: { ids: [6] } },
    { kind: 'update_vectors', points: [{ id: 7, vectors: { b: new Float32Array([2.5, -4]) } }] },
    { kind: 'delete_vectors', target: { ids: [8] }, names: ['a'] },
  ];
  const entry: LogEntry = { seq: 12, opId: 40, clock: tag(40, 3, 1), ops };
  t.same(decodeEntry(encodeEntry(entry)), entry, 'decode(encode(entry)) is the entry');
  const rounded = decodeEntry(encodeEntry({ ...entry, ops: [upsert(1, [0.1, 0.2, 0.3], {})] }));
  const a = (rounded.ops[0] as Extract<WriteOp, { kind: 'upsert' }>).points[0].vectors.a;
  t.same(a, Array.from(new Float32Array([0.1, 0.2, 0.3])), 'vectors come back as their f32 values');
});

t.test('an operation taken twice changes nothing: same tag, or an older tick of the same clock', async (t) => {
  const shard = await open(await folder(t));
  t.teardown(() => shard.close());
  await shard.apply([upsert(1, [1, 2, 3], { v: 1 })], 1, tag(1), true);
  await shard.apply([upsert(2, [4, 5, 6], { v: 2 })], 2, tag(2), true);
  const before = records(shard);
  const point = { clocks: [tag(2)], cutoff: [], firstSeq: 1, lastSeq: 2, appliedSeq: 2 };
  t.same(shard.recoveryPoint(), point, 'two entries, clock at tick 2');

  await shard.apply([upsert(1, [9, 9, 9], { v: 'again' })], 1, tag(1), true);
  await shard.apply([upsert(2, [9, 9, 9], { v: 'again' })], 2, tag(2), false);
  await shard.apply([{ kind: 'delete', target: { ids: [1, 2] } }], 2, tag(2), true);
  await shard.settle();
  t.same(records(shard), before, 'points and their versions unchanged');
  t.same(shard.recoveryPoint(), point, 'nothing logged');

  await shard.apply([upsert(1, [7, 7, 7], {})], 5, tag(1, 9), true);
  t.same(shard.recoveryPoint().clocks, [tag(2), tag(1, 9)], 'another peer\'s clock is its own');
  t.same(shard.record(1), { id: 1, vectors: { a: new Float32Array([7, 7, 7]) }, payload: {}, version: 5 }, 'and its operation applies');
});

t.test('wait=false answers once logged; the apply follows before any task reads', async (t) => {
  const dir = await folder(t);
  const shard = await open(dir);
  await shard.apply([upsert(1, [1, 1, 1], { n: 1 })], 1, tag(1), false);
  t.same(shard.recoveryPoint(), { clocks: [tag(1)], cutoff: [], firstSeq: 1, lastSeq: 1, appliedSeq: 0 }, 'logged, not applied yet when the call returns');
  await shard.apply([{ kind: 'set_payload', target: { ids: [1] }, payload: { m: 2 }, key: null }], 2, tag(2), false);
  t.equal(shard.recoveryPoint().appliedSeq, 1, 'the next operation saw (and so applied) the first');
  await shard.settle();
  t.same(shard.record(1), { id: 1, vectors: { a: new Float32Array([1, 1, 1]) }, payload: { n: 1, m: 2 }, version: 2 }, 'settled: both applied in order');
  t.same(shard.recoveryPoint(), { clocks: [tag(2)], cutoff: [], firstSeq: 1, lastSeq: 2, appliedSeq: 2 });

  await t.rejects(shard.apply([{ kind: 'clear_payload', target: { ids: [5] } }], 3, tag(3), false), { message: 'Not found: No point with id 5 found' }, 'a failing operation is refused before it is logged');
  t.equal(shard.recoveryPoint().lastSeq, 2, 'and leaves no entry');
  await shard.apply([upsert(2, [2, 2, 2], {})], 4, tag(4), false);
  await shard.close();
  const again = await open(dir);
  t.teardown(() => again.close());
  t.same(records(again), [
    { id: 1, vectors: { a: new Float32Array([1, 1, 1]) }, payload: { n: 1, m: 2 }, version: 2 },
    { id: 2, vectors: { a: new Float32Array([2, 2, 2]) }, payload: {}, version: 4 },
  ], 'close applies what is pending; the reopened shard has it all');
  t.same(again.recoveryPoint(), { clocks: [tag(4)], cutoff: [], firstSeq: 1, lastSeq: 3, appliedSeq: 3 }, 'recovery point survives the reopen');
});

t.test('updates taken as a group: each staged on the ones before it, a refused one left out, all logged in order', async (t) => {
  const dir = await folder(t);
  const shard = await open(dir);
  const marked = toFilter({ must: [{ key: 'n', match: { value: 1 } }] });
  const outcomes = await shard.applyGroup([
    { ops: [upsert(1, [1, 1, 1], { n: 1 })], opId: 1, clock: tag(1), wait: false },
    { ops: [{ kind: 'set_payload', target: { filter: marked }, payload: { seen: true }, key: null }], opId: 2, clock: tag(2), wait: false },
    { ops: [{ kind: 'clear_payload', target: { ids: [9] } }], opId: 3, clock: tag(3), wait: false },
    { ops: [{ kind: 'update_vectors', points: [{ id: 1, vectors: { b: new Float32Array([1, 2]) } }] }], opId: 4, clock: tag(4), wait: true },
    { ops: [upsert(1, [5, 5, 5], {})], opId: 2, clock: tag(2), wait: false },
  ]);
  t.same(outcomes.map((o) => o.ok), [true, true, false, true, true], 'the missing point\'s update alone is refused; a tag the group already took is skipped, not refused');
  t.match(outcomes[2], { ok: false, error: { message: 'Not found: No point with id 9 found' } });
  const expected = { id: 1, vectors: { a: new Float32Array([1, 1, 1]), b: new Float32Array([1, 2]) }, payload: { n: 1, seen: true }, version: 4 };
  t.same(shard.record(1), expected, 'the filter matched the point an earlier update of the group made, and the vector update found it');
  t.same(shard.recoveryPoint(), { clocks: [tag(4)], cutoff: [], firstSeq: 1, lastSeq: 3, appliedSeq: 3 }, 'three entries, applied before the answer (one update waits)');
  t.same((await shard.entriesAfter(0, 10)).map((e) => [e.seq, e.opId]), [[1, 1], [2, 2], [3, 4]], 'logged in order, without gaps');
  await shard.close();
  const again = await open(dir);
  t.teardown(() => again.close());
  t.same(records(again), [expected], 'the reopened shard has the same point');
});

/** Writes entries 1..count, each the same shape (an upsert of one point, ids of equal width). */
async function fill(shard: Shard, from: number, count: number): Promise<void> {
  for (let seq = from; seq < from + count; seq++) await shard.apply([upsert(100 + seq, [seq, 0, 0], { s: seq })], 10 + seq, tag(10 + seq), seq % 2 === 0);
}

/** The stored size of entry `seq` as fill() writes it. */
function entryBytes(seq: number): number {
  return encodeEntry({ seq, opId: 10 + seq, clock: tag(10 + seq), ops: [upsert(100 + seq, [seq, 0, 0], { s: seq })] }).byteLength;
}

t.test('wal_config truncates whole closed segments once applied and stored, keeping wal_retain_closed of them', async (t) => {
  // Three entries fit a segment, four do not.
  const capacityBytes = 3 * entryBytes(10);
  t.ok(4 * entryBytes(1) > capacityBytes, 'segment size as intended');
  for (const [retainClosed, firstSeq] of [[0, 10], [1, 7], [2, 4], [3, 1], [5, 1]]) {
    const dir = await folder(t);
    const shard = await open(dir, { capacityBytes, retainClosed });
    // Ten entries: segments 1-3, 4-6, 7-9 (closed) and 10 (open).
    await fill(shard, 1, 10);
    // Truncation goes with the flush that stores the records it allows.
    await shard.settle();
    await shard.flush();
    t.same([shard.recoveryPoint().firstSeq, shard.recoveryPoint().lastSeq], [firstSeq, 10], `wal_retain_closed ${retainClosed}: the log holds ${firstSeq} to 10`);
    const held = await shard.entriesAfter(firstSeq - 1, 100);
    t.same(held.map((e) => [e.seq, e.opId, e.clock.tick]), Array.from({ length: 11 - firstSeq }, (_, i) => [firstSeq + i, 10 + firstSeq + i, 10 + firstSeq + i]), 'every held entry, in order');
    if (firstSeq > 1) {
      await t.rejects(shard.entriesAfter(firstSeq - 2, 100), { message: `Bad request: operations after ${firstSeq - 2} are no longer in the operation log (it holds ${firstSeq} to 10)` }, 'entries truncated away are refused');
    }
    t.equal(shard.pointCount, 10, 'truncation removes log entries only');
    await shard.close();
    const again = await open(dir, { capacityBytes, retainClosed });
    // The cutoff: the highest tick among the truncated entries (entry seq carries tick 10 + seq).
    const cutoff = firstSeq > 1 ? [tag(10 + firstSeq - 1)] : [];
    t.same(shard.recoveryPoint().cutoff, cutoff, 'the cutoff names the last truncated tick');
    t.same(again.recoveryPoint(), { clocks: [tag(20)], cutoff, firstSeq, lastSeq: 10, appliedSeq: 10 }, 'the same after a reopen');
    // Entries 11 and 12 fill segment 10-12; 13 closes it, so one more segment may go.
    await fill(again, 11, 3);
    await again.settle();
    await again.flush();
    t.equal(again.recoveryPoint().firstSeq, retainClosed >= 4 ? 1 : [13, 10, 7, 4][retainClosed], 'segment bounds recomputed on open go on the same way');
    const first = again.recoveryPoint().firstSeq;
    t.same(again.recoveryPoint().cutoff, first > 1 ? [tag(10 + first - 1)] : [], 'segment clocks recomputed on open: the cutoff follows');
    await again.close();
  }
});

t.test('entries after N: a bounded page, and replaying them (twice) on another shard reproduces it', async (t) => {
  const source = await open(await folder(t));
  t.teardown(() => source.close());
  await fill(source, 1, 6);
  await source.apply([
    { kind: 'delete', target: { ids: [102] } },
    { kind: 'set_payload', target: { filter: toFilter({ must: [{ key: 's', range: { gte: 4 } }] }) }, payload: { big: true }, key: null },
    { kind: 'update_vectors', points: [{ id: 101, vectors: { b: new Float32Array([0.5, 0.25]) } }] },
  ], 30, tag(30), true);
  await source.apply([{ kind: 'delete_vectors', target: { ids: [103] }, names: ['a'] }, { kind: 'delete_payload', target: { ids: [104] }, keys: ['s'] }], 31, tag(31), false);
  await source.settle();

  const page = await source.entriesAfter(2, 3);
  t.same(page.map((e) => e.seq), [3, 4, 5], 'limit bounds the page');
  t.same(await source.entriesAfter(8, 10), [], 'nothing after the last entry');
  await t.rejects(source.entriesAfter(9, 10), { message: 'Bad request: the operation log ends at 8, there is no operation 9' });

  const target = await open(await folder(t));
  t.teardown(() => target.close());
  const all = await source.entriesAfter(0, 100);
  for (const e of all) await target.apply(e.ops, e.opId, e.clock, true);
  t.same(records(target), records(source), 'the replica has the same points, versions included');
  for (const e of all) await target.apply(e.ops, e.opId, e.clock, false);
  await target.settle();
  t.same(records(target), records(source), 'a second replay changes nothing');
  t.same(target.recoveryPoint(), { clocks: [tag(31)], cutoff: [], firstSeq: 1, lastSeq: 8, appliedSeq: 8 }, 'nor its log');
});
