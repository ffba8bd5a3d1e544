// Qdrant's rate limiter: a token bucket holding at most the per-minute limit, refilled at
// limit/60 tokens a second, full when created. An operation costs some tokens; one costing more
// than the bucket can ever hold is refused for good, one costing more than it holds now is told
// how long to wait.

/** Why tokens were not granted: never (the cost exceeds the capacity), or not yet. */
export type Shortage =
  | { kind: 'over_budget' }
  | { kind: 'retry'; available: number; retryAfterSec: number };

export class TokenBucket {
  private tokens: number;
  private lastRefill: number;
  private readonly perSecond: number;

  /** `clock` answers milliseconds; tests of the bucket alone may pass their own. */
  constructor(private readonly perMinute: number, private readonly clock: () => number = () => performance.now()) {
    this.tokens = perMinute;
    this.perSecond = perMinute / 60;
    this.lastRefill = clock();
  }

  private refill(): void {
    const now = this.clock();
    this.tokens = Math.min(this.perMinute, this.tokens + ((now - this.lastRefill) / 1000) * this.perSecond);
    this.lastRefill = now;
  }

  /**
   * Whether `cost` tokens are there now (null), else why not. Nothing is taken: a request that
   * spans several buckets asks each first, so a refusal by one takes nothing from the others.
   */
  shortage(cost: number): Shortage | null {
    if (cost > this.perMinute) return { kind: 'over_budget' };
    this.refill();
    if (this.tokens >= cost) return null;
    return { kind: 'retry', available: this.tokens, retryAfterSec: (cost - this.tokens) / this.perSecond };
  }

  /** Takes tokens `shortage` just granted. */
  take(cost: number): void {
    this.tokens -= cost;
  }
}
