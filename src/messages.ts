// Qdrant's wording of the errors the inner layers (collections, shards) report, each as the typed
// error carrying Qdrant's status code. Sources are Qdrant's code (lib/storage/src/content_manager/
// errors.rs for the prefixes, the named files below for the descriptions). It sits below every
// layer, so each may throw them; the messages about a request's form are in src/api/messages.ts.

import { AlreadyExists, BadInput, BadRequest, NotFound, ShardUnavailable } from './errors.js';
import type { PointId } from './model.js';

/**
 * CollectionError::NotFound, turned into a storage NotFound: Qdrant names the missing thing and
 * its Display appends " not found" (so a `what` ending in "exist" reads "... exist not found").
 */
export function notFound(what: string): NotFound {
  return new NotFound(`${what} not found`);
}

/** lib/collection/src/shards/shard_holder: a shard id the collection does not have. */
export function shardNotFound(id: number): NotFound {
  return notFound(`shard ${id}`);
}

/** lib/collection/src/common/snapshots_manager.rs: a snapshot file that is not in the snapshots directory. */
export function snapshotNotFound(name: string): NotFound {
  return notFound(`Snapshot ${name}`);
}

export function collectionNotFound(name: string): NotFound {
  return new NotFound(`Collection \`${name}\` doesn't exist!`);
}

/** 409 since Qdrant 1.8 (qdrant/qdrant#3422). */
export function collectionAlreadyExists(name: string): AlreadyExists {
  return new AlreadyExists(`Collection \`${name}\` already exists!`);
}

/** lib/storage/src/content_manager/toc/create_collection.rs: a collection may not take an alias's name. */
export function collectionNameIsAlias(name: string): BadInput {
  return new BadInput(`Can't create collection with name ${name}. Alias with the same name already exists`);
}

/** lib/storage/src/content_manager/alias_mapping.rs, on renaming an alias that is not there. */
export function aliasNotFound(alias: string): NotFound {
  return new NotFound(`Alias ${alias} does not exists!`);
}

/** segment's OperationError::WrongVectorDimension. */
export function vectorDimensionMismatch(expected: number, got: number): BadInput {
  return new BadInput(`Vector dimension error: expected dim: ${expected}, got ${got}`);
}

/**
 * Quiver's rule: a component of a float16 vector that would round to an infinity (Qdrant stores
 * the infinity, which then poisons every score computed with it, as for values beyond f32).
 */
export function float16OutOfRange(name: string, index: number, value: number, limit: number): BadInput {
  return new BadInput(`value ${value} at index ${index} of vector '${name}' is outside the float16 range (its magnitude must be below ${limit}, which rounds to at most 65504)`);
}

/** segment's OperationError::VectorNameNotExists. */
export function vectorNameNotFound(name: string): BadInput {
  return new BadInput(`Not existing vector name error: ${name}`);
}

/** segment's OperationError::ValidationError, reported as bad input: a rule the engine checks on the values themselves. */
export function validationFailed(description: string): BadInput {
  return new BadInput(`Validation failed: ${description}`);
}

/** A sparse vector under a dense vector's name, or a dense one under a sparse vector's name. */
export function sparseDenseMismatch(): BadInput {
  return new BadInput('Conversion between sparse and regular vectors failed');
}

/**
 * segment's OperationError::WrongMulti: a multivector under a regular vector's name (or a sparse
 * one), or a regular vector under a multivector's name.
 */
export function multiRegularMismatch(): BadInput {
  return new BadInput('Conversion between multi and regular vectors failed');
}

/** An unnamed vector sent to a collection that has only named ones. */
export function defaultVectorNotFound(): BadInput {
  return new BadInput('Default vector config is not found in collection');
}

/** lib/collection/src/shards/shard_holder: a fallback shard key selector whose keys are both missing. */
export function fallbackShardKeysNotFound(target: string | number, fallback: string | number): NotFound {
  return notFound(`Neither target shard key ${target} nor fallback shard key ${fallback} exist`);
}

/** lib/collection/src/shards/shard_holder: a fallback selector whose target key has no Active replica and whose fallback key is missing (Qdrant's shard_unavailable, 503). */
export function fallbackShardKeysInactive(target: string | number, fallback: string | number): ShardUnavailable {
  return new ShardUnavailable(`Neither target shard key ${target} nor fallback shard key ${fallback} have active replicas`);
}

/** src/common/collections.rs: shard keys asked of a collection with automatic sharding (creating or dropping one). */
export function shardKeysNeedCustomSharding(): BadRequest {
  return new BadRequest('Shard Key cannot be created with Auto sharding method');
}

/** src/common/collections.rs, creating a shard key. */
export function shardKeyAlreadyExists(key: string | number, collection: string): BadRequest {
  return new BadRequest(`Sharding key ${key} already exists for collection ${collection}`);
}

/** src/common/collections.rs, dropping a shard key. */
export function shardKeyDoesNotExist(key: string | number, collection: string): BadRequest {
  return new BadRequest(`Sharding key ${key} does not exist for collection ${collection}`);
}

/** CollectionError::PointNotFound, turned into a storage NotFound. */
/** A cluster operation named a peer that is not in the cluster (Qdrant's 400). */
export function peerDoesNotExist(peer: number): BadRequest {
  return new BadRequest(`Peer ${peer} does not exist`);
}

/** src/common/collections.rs do_update_collection_cluster: a shard the collection does not have. */
export function shardDoesNotExist(shard: number, collection: string): BadRequest {
  return new BadRequest(`Shard ${shard} of ${collection} does not exist`);
}

/** lib/collection/src/shards/transfer/helpers.rs validate_transfer: the source must serve the shard. */
export function shardNotActiveOn(shard: number, peer: number): BadRequest {
  return new BadRequest(`Shard ${shard} is not active on peer ${peer}`);
}

/** validate_transfer: a shard transfers to or from a peer once at a time. */
export function shardInTransfer(shard: number, from: number, to: number): BadRequest {
  return new BadRequest(`Shard ${shard} is already involved in transfer ${from} -> ${to}`);
}

/** src/common/collections.rs: `abort_transfer` of a transfer that does not run. */
export function transferDoesNotExist(ref: { collection: string; shard: number; from: number; to: number }): NotFound {
  return new NotFound(`Shard transfer ${ref.from} -> ${ref.to} for collection ${ref.collection}:${ref.shard} does not exist`);
}

/** `restart_transfer` asking for the method the transfer already has. */
export function transferUnchanged(shard: number, from: number, to: number): BadRequest {
  return new BadRequest(`Cannot restart transfer for shard ${shard} from ${from} to ${to}, its configuration did not change`);
}

/** Collection::handle_replica_changes: `drop_replica` of a peer holding none. */
export function noReplicaOn(shard: number, peer: number): BadRequest {
  return new BadRequest(`Peer ${peer} has no replica of shard ${shard}`);
}

/** handle_replica_changes: a shard keeps at least one replica that serves. */
export function lastActiveReplica(shard: number, peer: number): BadRequest {
  return new BadRequest(`Shard ${shard} must have at least one active replica after removing ${peer}`);
}

/**
 * Quiver's: a transfer method it does not have. Qdrant's `snapshot` and `wal_delta` move the
 * same data as `stream_records`, which is the one Quiver runs (and Qdrant's default).
 */
export function transferMethodNotSupported(method: string): BadRequest {
  return new BadRequest(`Shard transfer method ${method} is not supported by Quiver: use stream_records, snapshot or wal_delta`);
}

/** lib/collection/src/shards/shard_holder: a shard key a read or a cluster operation names that the collection does not have. */
export function shardKeyNotFound(key: string | number): BadRequest {
  return new BadRequest(`Shard key ${key} not found`);
}

/** src/common/collections.rs: `replicate_points` from a shard key of more than one shard. */
export function replicateFromManyShards(key: string | number, shards: number): BadRequest {
  return new BadRequest(`Only replicating from shard keys with exactly one shard is supported. Shard key ${key} has ${shards} shards`);
}

/** src/common/collections.rs: `replicate_points` into a shard key of more than one replica. */
export function replicateToManyReplicas(key: string | number, replicas: number): BadRequest {
  return new BadRequest(`Only replicating to shard keys with exactly one replica is supported. Shard key ${key} has ${replicas} replicas`);
}

/** Quiver's: `replicate_points` from a shard key into the same key (nothing to copy; its replica cannot feed itself). */
export function replicateIntoItself(key: string | number): BadRequest {
  return new BadRequest(`Cannot replicate points from shard key ${key} into itself`);
}

/** Rust's Debug names of the transfer methods, as Qdrant's messages print them. */
const METHOD_DEBUG_NAMES: Readonly<Record<string, string>> = { stream_records: 'StreamRecords', snapshot: 'Snapshot', wal_delta: 'WalDelta' };

/** src/common/collections.rs: `replicate_points` with a filter, where the configured method cannot filter. */
export function filterNeedsStreaming(method: string): BadRequest {
  return new BadRequest(`Can't do shard transfer using method ${METHOD_DEBUG_NAMES[method] ?? method} in combination with a filter`);
}

/**
 * Quiver's: `replicate_points` without a filter where the configured method is a snapshot or a
 * WAL delta, which would replace the target shard's content with the source's; Quiver copies
 * points between shards by streaming them only.
 */
export function pointsCopyNeedsStreaming(method: string): BadRequest {
  return new BadRequest(`Shard transfer method ${method} is not supported by Quiver for replicate_points: points are copied between shards by stream_records`);
}

/** src/common/collections.rs: `start_resharding` where resharding is not enabled (Qdrant's open-source build). */
export function reshardingCloudOnly(): BadRequest {
  return new BadRequest('resharding is only supported in Qdrant Cloud');
}

/** `abort_resharding` with no resharding under way (none ever is without resharding). */
export function reshardingNotInProgress(collection: string): BadRequest {
  return new BadRequest(`resharding is not in progress for collection ${collection}`);
}

/** validate_transfer: a target shard belongs to resharding and filtered transfers, which Quiver does not run. */
export function targetShardNotAllowed(shard: number): BadRequest {
  return new BadRequest(`Target shard ${shard} can only be set for ReshardingStreamRecords or filtered streaming records transfers`);
}

/** src/actix/api/cluster_api.rs: `DELETE /cluster/peer/{id}` without `force` of a peer holding replicas. */
export function peerHoldsShards(peer: number): BadRequest {
  return new BadRequest(`Cannot remove peer ${peer} as there are shards on it`);
}

/** Any cluster operation on a node outside a cluster. */
export function distributedModeDisabled(): BadRequest {
  return new BadRequest('Distributed mode disabled');
}

export function pointNotFound(id: PointId): NotFound {
  return new NotFound(`No point with id ${id} found`);
}

/**
 * lib/collection/src/operations/universal_query/collection_query.rs: a point given as an example
 * exists but has no vector of the name the query uses (the name printed as Rust's Debug of a str).
 */
export function exampleVectorNotFound(name: string): NotFound {
  return new NotFound(`Vector with name ${JSON.stringify(name)} for point not found`);
}

/** segment's OperationError::MissingRangeIndexForOrderBy, reported as bad input. */
export function missingRangeIndexForOrderBy(key: string): BadInput {
  return new BadInput(
    `No range index for \`order_by\` key: \`${key}\`. Please create one to use \`order_by\`. ` +
      'Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Range conditions',
  );
}

/** A scroll ordered by a payload key pages with `start_from`, never with an offset. */
export function offsetWithOrderBy(): BadRequest {
  return new BadRequest(
    'Cannot use an `offset` when using `order_by`. The alternative for paging is to use `order_by.start_from` ' +
      "and a filter to exclude the IDs that you've already seen for the `order_by.start_from` value",
  );
}

/** segment's OperationError::MissingMapIndexForFacet, reported as bad input. */
export function missingIndexForFacet(key: string): BadInput {
  return new BadInput(
    `No appropriate index for faceting: \`${key}\`. Please create one to facet on this field. ` +
      'Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Match conditions',
  );
}

/** lib/collection/src/config.rs, updating params of a vector the collection does not have. */
export function vectorParamsNotInConfig(name: string): BadInput {
  if (name === '') return new BadInput('Default vector params are not specified in config');
  return new BadInput(`Vector params for ${name} are not specified in config`);
}

/**
 * An f64 as Rust's Display prints it, which Qdrant's messages embed: the shortest digits that
 * read back the same, never in exponent form, `NaN`, `inf` and `-inf` for the non-finite.
 */
export function displayF64(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (Object.is(n, -0)) return '-0';
  const text = String(n);
  const e = text.indexOf('e');
  if (e < 0) return text;
  const sign = text.startsWith('-') ? '-' : '';
  const mantissa = text.slice(sign.length, e);
  const exponent = Number(text.slice(e + 1));
  const digits = mantissa.replace('.', '');
  const point = (mantissa.indexOf('.') < 0 ? mantissa.length : mantissa.indexOf('.')) + exponent;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** segment's OperationError::VariableTypeError: a formula variable without a value of its type. */
export function formulaVariableError(key: string, expected: 'number' | 'geo point' | 'datetime', description: string): BadInput {
  return new BadInput(`Expected ${expected} value for ${key} in the payload and/or in the formula defaults. Error: ${description}`);
}

/** segment's OperationError::NonFiniteNumber: a formula step that left the finite numbers. */
export function nonFiniteNumber(expression: string): BadInput {
  return new BadInput(`The expression ${expression} produced a non-finite number`);
}
