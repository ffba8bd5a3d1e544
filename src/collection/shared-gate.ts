// A collection's gate between its writes and the jobs that need the whole collection still
// (configuration, payload indexes, shard keys, snapshots, close and drop). Writes pass together,
// each then ordered by the replica sets it locks; a whole-collection job waits for the writes
// that passed before it and runs alone. Strictly first come, first served: a write that comes
// after a waiting whole-collection job waits for it too, so a drop refuses every later write.

interface Waiter {
  exclusive: boolean;
  enter: () => void;
}

export class SharedGate {
  private sharing = 0;
  private excluding = false;
  private readonly waiting: Waiter[] = [];

  /** Runs `job` beside the other shared jobs. */
  shared<T>(job: () => Promise<T>): Promise<T> {
    return this.pass(false, job);
  }

  /** Runs `job` alone. */
  exclusive<T>(job: () => Promise<T>): Promise<T> {
    return this.pass(true, job);
  }

  private async pass<T>(exclusive: boolean, job: () => Promise<T>): Promise<T> {
    await new Promise<void>((enter) => {
      this.waiting.push({ exclusive, enter });
      this.admit();
    });
    try {
      return await job();
    } finally {
      if (exclusive) this.excluding = false;
      else this.sharing--;
      this.admit();
    }
  }

  /** Lets in waiters from the front of the line for as long as the first one may enter. */
  private admit(): void {
    while (this.waiting.length > 0 && !this.excluding) {
      const next = this.waiting[0];
      if (next.exclusive) {
        if (this.sharing > 0) return;
        this.excluding = true;
      } else {
        this.sharing++;
      }
      this.waiting.shift();
      next.enter();
    }
  }
}
