// A shard's replicas' lapses from source of truth over the views a peer applies, one revision at
// a time: what decides whether an update its answering replica applied may stand.

import t from 'tap';
import { SourceLapses } from '../src/cluster/source-lapses.js';

t.test('a replica Dead and recovered between two revisions lapsed, though both show it Active', async (t) => {
  const lapses = new SourceLapses();
  lapses.observe(10, { 1: 'Active', 2: 'Active' });
  lapses.observe(12, { 1: 'Dead', 2: 'Active' });
  lapses.observe(15, { 1: 'Partial', 2: 'Active' });
  lapses.observe(18, { 1: 'Active', 2: 'Active' });
  t.notOk(lapses.keptSince(1, 10), 'replica 1 was not a source of truth at 12 and 15');
  t.ok(lapses.keptSince(1, 15), 'nor lapsed after 15');
  t.ok(lapses.keptSince(2, 10), 'replica 2 stayed Active throughout');
});

t.test('other replicas changing, a transfer to a new one finishing, leave a source kept', async (t) => {
  const lapses = new SourceLapses();
  lapses.observe(3, { 1: 'Active' });
  lapses.observe(4, { 1: 'Active', 2: 'Partial' });
  lapses.observe(9, { 1: 'Active', 2: 'Active' });
  t.ok(lapses.keptSince(1, 3));
  t.notOk(lapses.keptSince(2, 3), 'the receiver was Partial at 4');
  t.ok(lapses.keptSince(2, 4));
});

t.test('a replica dropped from the shard, or the shard gone from the view, lapsed', async (t) => {
  const lapses = new SourceLapses();
  lapses.observe(1, { 1: 'Active', 2: 'Active' });
  lapses.observe(2, { 2: 'Active' });
  t.notOk(lapses.keptSince(1, 1), 'replica 1 left at 2');
  lapses.observe(3, null);
  t.notOk(lapses.keptSince(2, 2), 'the shard left the view at 3');
  t.ok(lapses.keptSince(7, 0), 'a peer never seen never lapsed');
});
