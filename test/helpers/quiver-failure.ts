// The Quiver error a promise rejects with: for tests of refusals that travel as QuiverErrors (from
// a worker, over p2p) and must keep their kind, status and message.

import { isQuiverError, type QuiverError } from '../../src/errors.js';

export async function quiverFailure(promise: Promise<unknown>): Promise<QuiverError> {
  try {
    await promise;
  } catch (err) {
    if (isQuiverError(err)) return err;
    throw err;
  }
  throw new Error('expected a failure');
}
