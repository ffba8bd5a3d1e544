// Qdrant's shard distribution: replicas per shard = min(replication_factor, peers), on distinct
// peers, least-loaded first; ties broken by a per-peer random bias, then peer id. Checked against
// the rule itself on many shapes, and on exact placements with a fixed random source.

import t from 'tap';
import { defaultShardNumber, distributeShards } from '../src/cluster/placement.js';

/** A seeded generator (mulberry32): deterministic "random" biases for a test. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('default shard_number in a cluster: shard_number_per_node x peers, else peers', async (t) => {
  t.equal(defaultShardNumber(3), 3);
  t.equal(defaultShardNumber(1), 1);
  t.equal(defaultShardNumber(3, 2), 6);
  t.equal(defaultShardNumber(5, 1), 5);
});

t.test('every shape: distinct peers, min(rf, peers) replicas, counts differ by at most one', async (t) => {
  const random = seeded(7);
  for (let peersCount = 1; peersCount <= 5; peersCount++) {
    const peers = Array.from({ length: peersCount }, (_, i) => 100 + i * 7);
    for (let shards = 1; shards <= 8; shards++) {
      for (let rf = 1; rf <= 4; rf++) {
        const ids = Array.from({ length: shards }, (_, i) => i);
        const placement = distributeShards(ids, rf, peers, random);
        t.same([...placement.keys()], ids, `${shards} shards placed`);
        const load = new Map(peers.map((p) => [p, 0]));
        for (const replicas of placement.values()) {
          t.equal(replicas.length, Math.min(rf, peersCount), 'replicas = min(rf, peers)');
          t.equal(new Set(replicas).size, replicas.length, 'distinct peers');
          for (const p of replicas) {
            t.ok(load.has(p), 'a known peer');
            load.set(p, load.get(p)! + 1);
          }
        }
        const counts = [...load.values()];
        t.ok(Math.max(...counts) - Math.min(...counts) <= 1, `balanced: ${counts.join(',')} (peers ${peersCount}, shards ${shards}, rf ${rf})`);
      }
    }
  }
});

t.test('least-loaded first, then the random bias, then the peer id', async (t) => {
  // Biases in peer order: 0.5, 0.1, 0.9 -> peer 2 first, then 1, then 3.
  const biases = [0.5, 0.1, 0.9];
  const fixed = () => biases.shift()!;
  const placement = distributeShards([0, 1, 2, 3], 1, [1, 2, 3], fixed);
  t.same([...placement], [[0, [2]], [1, [1]], [2, [3]], [3, [2]]]);

  // Equal biases: the lower peer id wins the tie.
  const ties = distributeShards([0, 1, 2], 2, [30, 10, 20], () => 0.5);
  t.same([...ties], [[0, [10, 20]], [1, [30, 10]], [2, [20, 30]]]);
});

t.test('the same random source gives the same placement; ids are kept as given', async (t) => {
  const a = distributeShards([5, 6, 7], 2, [1, 2, 3, 4], seeded(42));
  const b = distributeShards([5, 6, 7], 2, [1, 2, 3, 4], seeded(42));
  t.same([...a], [...b]);
  t.same([...a.keys()], [5, 6, 7]);
  t.throws(() => distributeShards([0], 1, [], Math.random), RangeError);
});
