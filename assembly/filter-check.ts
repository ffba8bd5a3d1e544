// Filters checked as the search reaches points (a condition no payload index answers, Qdrant's
// per-point check during graph search): the allow-bitset then holds the candidates, and a
// candidate is confirmed by the host the first time the search asks about it. `confirmed`
// remembers the answers: a yes sets its bit, a no clears the candidate's allow bit, so the host
// is asked at most once per point per search.

import { bitSet, setBit } from "./layout";

/** The host's check of offset `id` (non-zero: it matches). */
@external("env", "checkPoint")
declare function hostCheck(id: i32): i32;

/** Bitset of candidates the host confirmed; 0 = every allowed bit is final (no host checks). */
let confirmed: usize = 0;

/** Turns host checks on (a zeroed bitset of the allow-bitset's size) or off (0). */
export function checkAsReached(bits: usize): void {
  confirmed = bits;
}

/** Whether `id` is allowed by the allow-bitset at `allow`, asking the host on first sight. */
@inline export function allowedBy(allow: usize, id: i32): bool {
  if (!bitSet(allow, id)) return false;
  if (confirmed == 0 || bitSet(confirmed, id)) return true;
  if (hostCheck(id) != 0) {
    setBit(confirmed, id, true);
    return true;
  }
  setBit(allow, id, false);
  return false;
}
