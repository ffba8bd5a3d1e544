// The node's keys and who a request is: the key comes in the `api-key` header or, failing that,
// `Authorization: Bearer <key>`. The API key grants everything, the read-only key reads
// everything, and with `jwt_rbac` any other key is read as a token signed by the API key.

import type { IncomingHttpHeaders } from 'node:http';
import type { QuiverConfig } from '../../config/config.js';
import type { CollectionManager } from '../../collection/manager.js';
import { RejectedToken, Unauthorized } from '../../errors.js';
import { FULL_GRANT, READ_ONLY_GRANT, type Grant } from './grant.js';
import { INVALID_KEY, keyOf, sameKey } from '../../key-compare.js';
import { readToken, type TokenClaims } from './token.js';

const MISSING_KEY = 'Must provide an API key or an Authorization bearer token';
const STATEFUL_CHECK_FAILED = 'Invalid JWT, stateful validation failed';

/** Whether the configuration asks for authentication at all. */
export function hasApiKeys(config: QuiverConfig): boolean {
  return keyOf(config.service.api_key) !== null || keyOf(config.service.read_only_api_key) !== null;
}

/** The presented key; the `api-key` header wins even when `Authorization` is also sent. */
export function presentedKey(headers: IncomingHttpHeaders): string | null {
  const apiKey = headers['api-key'];
  if (apiKey !== undefined) return Array.isArray(apiKey) ? apiKey.join(', ') : apiKey;
  const authorization = headers.authorization;
  return authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : null;
}

export class NodeKeys {
  private readonly apiKey: Buffer | null;
  private readonly readOnlyKey: Buffer | null;
  /** The token secret: the API key, when granular keys are on. */
  private readonly tokenSecret: Uint8Array | null;

  constructor(config: QuiverConfig, private readonly collections: CollectionManager) {
    this.apiKey = keyOf(config.service.api_key);
    this.readOnlyKey = keyOf(config.service.read_only_api_key);
    this.tokenSecret = config.service.jwt_rbac ? this.apiKey : null;
  }

  get enabled(): boolean {
    return this.apiKey !== null || this.readOnlyKey !== null;
  }

  /** What the request's key grants; throws Unauthorized (401) or RejectedToken (403) otherwise. */
  async authenticate(headers: IncomingHttpHeaders): Promise<Grant> {
    const key = presentedKey(headers);
    if (key === null) throw new Unauthorized(MISSING_KEY);
    const presented = Buffer.from(key);
    if (sameKey(this.apiKey, presented)) return FULL_GRANT;
    if (sameKey(this.readOnlyKey, presented)) return READ_ONLY_GRANT;
    const claims = this.tokenSecret === null ? null : await readToken(key, this.tokenSecret);
    if (claims === null) throw new Unauthorized(INVALID_KEY);
    if (claims.valueExists !== null) await this.checkValueExists(claims.valueExists);
    return claims.grant;
  }

  /** The token holds only while a matching point exists; the check itself is not limited by the token's grant. */
  private async checkValueExists({ collection, filter }: NonNullable<TokenClaims['valueExists']>): Promise<void> {
    if (!this.collections.exists(collection)) throw new RejectedToken(STATEFUL_CHECK_FAILED);
    const matching = await this.collections.get(collection).reader().count(filter);
    if (matching === 0) throw new Unauthorized(STATEFUL_CHECK_FAILED);
  }
}
