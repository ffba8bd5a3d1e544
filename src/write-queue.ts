// Runs async jobs one after another, in submission order (a shard's writes, the manager's
// changes to its table of collections and aliases).

export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();

  enqueue<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    // A failed job must not stop the ones queued after it.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
