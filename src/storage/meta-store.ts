// Node metadata (collections, aliases, node settings such as the peer id and the quota
// configuration) in one classic-level store under the storage path. Every change is a synced batch: metadata and its aliases change together.

import { ClassicLevel } from 'classic-level';
import { join } from 'node:path';

const COLLECTION = 'c:';
const ALIAS = 'a:';
const NODE = 'n:';

export class MetaStore<C> {
  private constructor(private readonly db: ClassicLevel<string, string>) {}

  static async open(storagePath: string): Promise<MetaStore<never>> {
    const db = new ClassicLevel<string, string>(join(storagePath, 'meta'), { valueEncoding: 'utf8' });
    await db.open();
    return new MetaStore(db);
  }

  typed<T>(): MetaStore<T> {
    return this as unknown as MetaStore<T>;
  }

  async collections(): Promise<C[]> {
    const out: C[] = [];
    for await (const value of this.db.values({ gte: COLLECTION, lt: COLLECTION + '\uffff' })) out.push(JSON.parse(value) as C);
    return out;
  }

  async aliases(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for await (const [key, value] of this.db.iterator({ gte: ALIAS, lt: ALIAS + '\uffff' })) out.set(key.slice(ALIAS.length), value);
    return out;
  }

  async putCollection(name: string, record: C): Promise<void> {
    await this.db.put(COLLECTION + name, JSON.stringify(record), { sync: true });
  }

  /** Removes a collection and the aliases pointing to it in one batch. */
  async deleteCollection(name: string, aliases: string[]): Promise<void> {
    const batch = this.db.batch().del(COLLECTION + name);
    for (const alias of aliases) batch.del(ALIAS + alias);
    await batch.write({ sync: true });
  }

  /** Applies a whole alias change list at once: removals, then additions. */
  async changeAliases(removed: string[], added: Map<string, string>): Promise<void> {
    const batch = this.db.batch();
    for (const alias of removed) batch.del(ALIAS + alias);
    for (const [alias, collection] of added) batch.put(ALIAS + alias, collection);
    await batch.write({ sync: true });
  }

  /** A node setting (JSON), or undefined if it was never stored. */
  async nodeSetting<T>(key: string): Promise<T | undefined> {
    const value = await this.db.get(NODE + key);
    return value === undefined ? undefined : (JSON.parse(value) as T);
  }

  async putNodeSetting(key: string, value: unknown): Promise<void> {
    await this.db.put(NODE + key, JSON.stringify(value), { sync: true });
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
