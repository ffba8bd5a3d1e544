// Runs async jobs one after another, in submission order (a collection's writes, changes to collection records).

export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();

  enqueue<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    // A failed job must not stop the ones queued after it.
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every job queued so far has finished. */
  async idle(): Promise<void> {
    await this.tail;
  }
}
