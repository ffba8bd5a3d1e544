// Granular keys (`service.jwt_rbac`): a JWT signed with HS256 by the node's API key, carrying
// Qdrant's claims. `exp` is optional and checked when present (30 s of clock leeway), as Qdrant's
// JWT parser requires no claim (src/common/auth/jwt_parser.rs); `access` is `r`, `m` or a list of
// `{collection, access}` and defaults to full access when absent; `value_exists` makes the token
// valid only while a point matching every key/value pair exists in a collection.

import { errors, jwtVerify } from 'jose';
import { toFilter, type WireFieldCondition } from '../../api/filter.js';
import { RejectedToken, Unauthorized } from '../../errors.js';
import type { Filter } from '../../shard/filter/types.js';
import { FULL_GRANT, type CollectionMode, type Grant } from './grant.js';

export interface TokenClaims {
  grant: Grant;
  valueExists: { collection: string; filter: Filter } | null;
}

const CLOCK_LEEWAY_SECONDS = 30;
const COLLECTION_MODES: readonly string[] = ['r', 'rw', 'prw'] satisfies CollectionMode[];

type Claim = Record<string, unknown>;

function isObject(value: unknown): value is Claim {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The token's claims; null when the key is not a token this secret can read at all. */
export async function readToken(token: string, secret: Uint8Array): Promise<TokenClaims | null> {
  let payload: Claim;
  try {
    ({ payload } = await jwtVerify(token, secret, { algorithms: ['HS256'], clockTolerance: CLOCK_LEEWAY_SECONDS }));
  } catch (error) {
    // Qdrant refuses these two with 403 and the JWT library's names for them; any other failure
    // means the key is not a token for this node.
    if (error instanceof errors.JWSSignatureVerificationFailed) throw new RejectedToken('InvalidSignature');
    if (error instanceof errors.JWTExpired) throw new RejectedToken('ExpiredSignature');
    return null;
  }
  const grant = grantOf(payload.access);
  const valueExists = valueExistsOf(payload.value_exists);
  if (grant === null || valueExists === undefined) return null;
  return { grant, valueExists };
}

function grantOf(access: unknown): Grant | null {
  if (access === undefined) return FULL_GRANT;
  if (access === 'r' || access === 'm') return { global: access };
  if (!Array.isArray(access)) return null;
  const collections = new Map<string, CollectionMode>();
  for (const entry of access) {
    if (!isObject(entry) || typeof entry.collection !== 'string' || !COLLECTION_MODES.includes(entry.access as string)) return null;
    // Claims that parse but break Qdrant's rules are refused with its validation message.
    if (entry.payload !== undefined && entry.payload !== null) throw new Unauthorized("access: The 'payload' constraint is deprecated and should not be used");
    if (collections.has(entry.collection)) throw new Unauthorized('access: Collection name should be unique');
    collections.set(entry.collection, entry.access as CollectionMode);
  }
  return { collections };
}

/** The existence check of `value_exists`; undefined when the claim is malformed. */
function valueExistsOf(claim: unknown): TokenClaims['valueExists'] | undefined {
  if (claim === undefined || claim === null) return null;
  if (!isObject(claim) || typeof claim.collection !== 'string' || !Array.isArray(claim.matches)) return undefined;
  const must: WireFieldCondition[] = [];
  for (const pair of claim.matches) {
    if (!isObject(pair) || typeof pair.key !== 'string' || !isMatchValue(pair.value)) return undefined;
    must.push({ key: pair.key, match: { value: pair.value } });
  }
  try {
    return { collection: claim.collection, filter: toFilter({ must }) };
  } catch {
    return undefined; // a key that is not a payload path
  }
}

/** Qdrant matches a keyword, an integer or a bool. */
function isMatchValue(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'boolean' || Number.isSafeInteger(value);
}
