// The request bodies Quiver validates, by Qdrant's type name, with their schemas (rules inline,
// src/api/schemas/derive.ts splits them), and the schemas they refer to by `$id`. This is what the
// validators are compiled from, at run time or at build time (compiled-validators.ts), and what
// the fingerprint of a build's generated validators is taken of.

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Options, SchemaObject } from 'ajv';
import { CHANGE_ALIASES } from './schemas/aliases.js';
import { CLUSTER_OPERATIONS } from './schemas/cluster-operations.js';
import { CREATE_COLLECTION, UPDATE_COLLECTION, VECTOR_NAME_CONFIG } from './schemas/collection.js';
import { rulesOf, shapeOf } from './schemas/derive.js';
import { CREATE_FIELD_INDEX } from './schemas/payload-index.js';
import {
  COUNT_REQUEST,
  DELETE_PAYLOAD,
  DELETE_VECTORS,
  POINT_INSERT_OPERATIONS,
  POINT_REQUEST,
  POINTS_SELECTOR,
  SCROLL_REQUEST,
  SET_PAYLOAD,
  UPDATE_OPERATIONS,
  UPDATE_VECTORS,
} from './schemas/points.js';
import { QUOTA_CONFIG } from './schemas/quota.js';
import { CREATE_SHARDING_KEY, DROP_SHARDING_KEY } from './schemas/shard-keys.js';
import { SHARD_SNAPSHOT_RECOVER, SNAPSHOT_RECOVER, type WireSnapshotRecover } from './schemas/snapshots.js';
import { SEARCH_MATRIX_REQUEST, DISCOVER_REQUEST, DISCOVER_REQUEST_BATCH, FACET_REQUEST, QUERY_REQUEST, QUERY_REQUEST_BATCH, RECOMMEND_REQUEST, RECOMMEND_REQUEST_BATCH, RECOMMEND_GROUPS_REQUEST, QUERY_GROUPS_REQUEST, SEARCH_GROUPS_REQUEST, SEARCH_REQUEST, SEARCH_REQUEST_BATCH } from './schemas/search.js';
import { VALIDATOR_KEYWORDS } from './validator-keywords.js';
import type { WireQuotaConfig } from '../quota/config.js';
import type {
  WireChangeAliases,
  WireCountRequest,
  WireCreateCollection,
  WireCreateFieldIndex,
  WireClusterOperations,
  WireCreateShardingKey,
  WireDropShardingKey,
  WireVectorNameConfig,
  WireDeletePayload,
  WireDeleteVectors,
  WirePointInsertOperations,
  WirePointRequest,
  WirePointsSelector,
  WireScrollRequest,
  WireSetPayload,
  WireUpdateCollection,
  WireUpdateOperations,
  WireUpdateVectors,
  WireSearchRequest,
  WireSearchRequestBatch,
  WireQueryRequest,
  WireQueryRequestBatch,
  WireFacetRequest,
  WireRecommendRequest,
  WireRecommendRequestBatch,
  WireSearchGroupsRequest,
  WireRecommendGroupsRequest,
  WireQueryGroupsRequest,
  WireDiscoverRequest,
  WireDiscoverRequestBatch,
  WireSearchMatrixRequest,
} from './types.js';

/** Each request body Quiver validates, by the name of its Qdrant type. */
export interface BodyTypes {
  CreateCollection: WireCreateCollection;
  UpdateCollection: WireUpdateCollection;
  PointInsertOperations: WirePointInsertOperations;
  PointRequest: WirePointRequest;
  PointsSelector: WirePointsSelector;
  UpdateVectors: WireUpdateVectors;
  DeleteVectors: WireDeleteVectors;
  SetPayload: WireSetPayload;
  DeletePayload: WireDeletePayload;
  UpdateOperations: WireUpdateOperations;
  ScrollRequest: WireScrollRequest;
  CountRequest: WireCountRequest;
  CreateFieldIndex: WireCreateFieldIndex;
  ChangeAliasesOperation: WireChangeAliases;
  SearchRequest: WireSearchRequest;
  SearchRequestBatch: WireSearchRequestBatch;
  QueryRequest: WireQueryRequest;
  QueryRequestBatch: WireQueryRequestBatch;
  FacetRequest: WireFacetRequest;
  RecommendRequest: WireRecommendRequest;
  RecommendRequestBatch: WireRecommendRequestBatch;
  SearchGroupsRequest: WireSearchGroupsRequest;
  RecommendGroupsRequest: WireRecommendGroupsRequest;
  QueryGroupsRequest: WireQueryGroupsRequest;
  DiscoverRequest: WireDiscoverRequest;
  DiscoverRequestBatch: WireDiscoverRequestBatch;
  SearchMatrixRequest: WireSearchMatrixRequest;
  SnapshotRecover: WireSnapshotRecover;
  ShardSnapshotRecover: WireSnapshotRecover;
  QuotaConfig: WireQuotaConfig;
  CreateShardingKey: WireCreateShardingKey;
  DropShardingKey: WireDropShardingKey;
  ClusterOperations: WireClusterOperations;
  VectorNameConfig: WireVectorNameConfig;
}

export type BodyName = keyof BodyTypes;

/** Each body's schema, rules inline (src/api/schemas/derive.ts splits them). */
export const BODY_SCHEMAS: Readonly<Record<BodyName, SchemaObject>> = {
  CreateCollection: CREATE_COLLECTION,
  UpdateCollection: UPDATE_COLLECTION,
  PointInsertOperations: POINT_INSERT_OPERATIONS,
  PointRequest: POINT_REQUEST,
  PointsSelector: POINTS_SELECTOR,
  UpdateVectors: UPDATE_VECTORS,
  DeleteVectors: DELETE_VECTORS,
  SetPayload: SET_PAYLOAD,
  DeletePayload: DELETE_PAYLOAD,
  UpdateOperations: UPDATE_OPERATIONS,
  ScrollRequest: SCROLL_REQUEST,
  CountRequest: COUNT_REQUEST,
  CreateFieldIndex: CREATE_FIELD_INDEX,
  ChangeAliasesOperation: CHANGE_ALIASES,
  SearchRequest: SEARCH_REQUEST,
  SearchRequestBatch: SEARCH_REQUEST_BATCH,
  QueryRequest: QUERY_REQUEST,
  QueryRequestBatch: QUERY_REQUEST_BATCH,
  FacetRequest: FACET_REQUEST,
  RecommendRequest: RECOMMEND_REQUEST,
  RecommendRequestBatch: RECOMMEND_REQUEST_BATCH,
  SearchGroupsRequest: SEARCH_GROUPS_REQUEST,
  RecommendGroupsRequest: RECOMMEND_GROUPS_REQUEST,
  QueryGroupsRequest: QUERY_GROUPS_REQUEST,
  DiscoverRequest: DISCOVER_REQUEST,
  DiscoverRequestBatch: DISCOVER_REQUEST_BATCH,
  SearchMatrixRequest: SEARCH_MATRIX_REQUEST,
  SnapshotRecover: SNAPSHOT_RECOVER,
  ShardSnapshotRecover: SHARD_SNAPSHOT_RECOVER,
  QuotaConfig: QUOTA_CONFIG,
  CreateShardingKey: CREATE_SHARDING_KEY,
  DropShardingKey: DROP_SHARDING_KEY,
  ClusterOperations: CLUSTER_OPERATIONS,
  VectorNameConfig: VECTOR_NAME_CONFIG,
};

/**
 * Everything the validators are compiled from: the bodies, and the schemas they refer to by `$id`,
 * registered whole or, for a self-nesting one (a prefetch), as its shape and its rules
 * (`<id>Rules`) apart. src/api/validator.ts names them.
 */
export interface ValidatorSources {
  whole: readonly SchemaObject[];
  split: readonly SchemaObject[];
}

// References stay calls (inlineRefs: false): a self-nesting schema (prefetch) is validated by
// recursion, and inlined references would make every level's frame big enough to overflow the
// stack before the 127 levels a body may nest.
export const AJV_OPTIONS: Options = { strict: true, allowUnionTypes: true, verbose: true, inlineRefs: false };

/** What is registered with Ajv before the bodies are compiled. */
export function registeredSchemas(sources: ValidatorSources): SchemaObject[] {
  return [
    ...sources.whole,
    ...sources.split.flatMap((schema) => [shapeOf(schema) as SchemaObject, { ...(rulesOf(schema) as SchemaObject), $id: `${String(schema.$id)}Rules` }]),
  ];
}

/** A body's two validators' schemas: its shape (serde) and its rules (validator crate; null when it has none). */
export interface BodyParts {
  shape: SchemaObject;
  rules: SchemaObject | null;
}

export function bodyParts(name: BodyName): BodyParts {
  const schema = BODY_SCHEMAS[name];
  const rules = rulesOf(schema);
  return { shape: shapeOf(schema) as SchemaObject, rules: rules === true ? null : (rules as SchemaObject) };
}

export const BODY_NAMES = Object.keys(BODY_SCHEMAS) as BodyName[];

/** Bumped whenever the generated script's form changes (validator-compiler.ts), so older builds read as stale. */
const GENERATED_FORM = 1;

/**
 * A digest of everything the validators are compiled from: Ajv's version and options, the
 * keywords' definitions (their functions are called, not copied, by generated code), the
 * registered schemas and every body's parts. Generated validators carrying another digest were
 * compiled from other schemas.
 */
export function validatorFingerprint(sources: ValidatorSources): string {
  const ajvVersion = (createRequire(import.meta.url)('ajv/package.json') as { version: string }).version;
  const bodies = BODY_NAMES.map((name) => [name, bodyParts(name)]);
  const text = JSON.stringify([GENERATED_FORM, ajvVersion, AJV_OPTIONS, VALIDATOR_KEYWORDS, registeredSchemas(sources), bodies]);
  return createHash('sha256').update(text).digest('hex');
}
