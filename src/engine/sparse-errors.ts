// The sparse index's errors, as typed classes. The engine imports only its own modules (it runs
// unchanged in browsers, test/engine-portable.test.ts), so these are not src/errors.ts classes:
// a shard turns InvalidSparseVector into BadInput (400, "Wrong input: <message>") and
// NotASparseIndex into ServiceError (500: its stored data is damaged).

/** A sparse vector the index cannot take: lengths differ, a duplicate or invalid index, a non-finite value. */
export class InvalidSparseVector extends Error {
  override readonly name = 'InvalidSparseVector';
}

/** Bytes that are not an image written by SparseIndex.serialize(). */
export class NotASparseIndex extends Error {
  override readonly name = 'NotASparseIndex';

  constructor(reason: string) {
    super(`not a serialised Quiver sparse index: ${reason}`);
  }
}
