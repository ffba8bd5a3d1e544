// The issues board of `GET /issues`: problems found in how the node is used, each with a
// suggested solution, kept until solved or cleared (`DELETE /issues`). Quiver reports Qdrant's
// "too many collections" issue: more than 30 collections holding on average few points each.

export interface IssueRecord {
  id: string;
  description: string;
  solution: { refactor: string };
  timestamp: string;
}

const MANY_COLLECTIONS = 30;
const FEW_POINTS = 300;

const TOO_MANY_COLLECTIONS = 'TOO_MANY_COLLECTIONS/';

export class IssueBoard {
  private readonly issues = new Map<string, IssueRecord>();
  /** Collection count at the last density check: the check reruns only when it changes, as Qdrant checks on create and delete. */
  private checkedCount: number | null = null;

  list(): IssueRecord[] {
    return [...this.issues.values()];
  }

  clear(): void {
    this.issues.clear();
  }

  /**
   * Qdrant's rule: an issue when there are more than 30 collections and the average number of
   * points per collection, divided by the number of collections, is below 300 / 30.
   */
  checkCollectionDensity(pointCounts: number[]): void {
    const collections = pointCounts.length;
    if (collections === this.checkedCount) return;
    this.checkedCount = collections;
    const divisor = Math.max(1, collections);
    const average = Math.floor(pointCounts.reduce((a, b) => a + b, 0) / divisor);
    const tooMany = collections > MANY_COLLECTIONS && average / divisor < FEW_POINTS / MANY_COLLECTIONS;
    if (!tooMany) {
      this.issues.delete(TOO_MANY_COLLECTIONS);
      return;
    }
    if (this.issues.has(TOO_MANY_COLLECTIONS)) return;
    this.issues.set(TOO_MANY_COLLECTIONS, {
      id: TOO_MANY_COLLECTIONS,
      description:
        "It looks like you have too many collections.\nIf your architecture creates collections programmatically, it's probably better to restructure your solution into a fixed number of them.",
      solution: { refactor: 'Restructure your usage of Qdrant into a fixed number of collections' },
      timestamp: new Date().toISOString(),
    });
  }
}
