// Qdrant's wording of the errors about a request's form (the inner layers' are in
// src/messages.ts), each as the typed error carrying Qdrant's status code. Sources are Qdrant's
// code (the named files below) and responses of real Qdrant servers in bug reports.

import { BadInput, BadRequest, FormatError, NotFound, ValidationError } from '../errors.js';
import type { PointId } from '../model.js';

/** Where a request part came from, as Qdrant names it in format and validation errors. */
export type RequestPart = 'JSON body' | 'query parameters' | 'path parameters';

/** serde could not read the part (src/actix/mod.rs validation_error_handler): 400. */
export function formatError(detail: string, part: RequestPart = 'JSON body'): FormatError {
  // actix-web-validator files body errors as JSON payload errors and the others as deserialize ones.
  const prefix = part === 'JSON body' ? 'Format error' : 'Deserialize error';
  return new FormatError(`${prefix} in ${part}: ${detail}`);
}

/** lib/segment/src/json_path: what JsonPath's deserializer says of a key it cannot parse. */
export function invalidJsonPathText(key: string): string {
  return `Invalid json path: '${key}'`;
}

/** A payload key that is not a JsonPath, in a part read outside the body schema (a path parameter, a payload key list). */
export function invalidJsonPath(key: string, part: RequestPart = 'JSON body'): FormatError {
  return formatError(invalidJsonPathText(key), part);
}

/** Qdrant's PointsSelectorValidationError: a points selector or payload change naming neither points nor a filter, refused by its deserializer (400). */
export const POINTS_OR_FILTER = 'Either list of point ids or filter must be provided';

/** One broken validator rule: the field path as Qdrant prints it and the description. */
export interface RuleBreach {
  path: string;
  message: string;
}

/** Rules broken on a readable part (lib/collection/src/operations/validation.rs): 422. */
export function validationError(breaches: RuleBreach[], part: RequestPart = 'JSON body'): ValidationError {
  const listed = breaches.map(({ path, message }) => `${path}: ${message}`).join('; ');
  return new ValidationError(`Validation error in ${part}: [${listed}]`);
}

/** src/common/update.rs: an index asked for without `field_schema` (Qdrant does not infer one). */
export function fieldSchemaRequired(): BadRequest {
  return new BadRequest("Can't auto-detect field type, please specify `field_schema` in the request");
}

/** lib/collection/src/discovery.rs: a discover request with neither a target nor context pairs. */
export function discoverNeedsTargetOrContext(): BadRequest {
  return new BadRequest('target and/or context_pairs must be specified');
}

/** src/common/collections.rs: a shard key placement naming a peer that is not in the cluster. */
export function peerDoesNotExist(peer: number): BadRequest {
  return new BadRequest(`Peer ${peer} does not exist`);
}

/** src/common/collections.rs: a shard key placement given as an empty list. */
export function emptyPlacement(key: string | number): BadRequest {
  return new BadRequest(`Sharding key ${key} placement cannot be empty. If you want to use random placement, do not specify placement`);
}

/** src/common/collections.rs: a shard key's initial state other than Active or Partial. */
export function initialStateNotAllowed(state: string): BadRequest {
  return new BadRequest(`Initial state cannot be ${state}, only Active or Partial are allowed`);
}

/** src/actix/api/retrieve_api.rs: GET of one point whose path id is neither an unsigned integer nor a UUID. */
export function unrecognizedPointId(raw: string): BadInput {
  return new BadInput(`Can not recognize "${raw}" as point id`);
}

/** src/actix/api/retrieve_api.rs: GET of one point that does not exist (its own wording, not PointNotFound's). */
export function pointDoesNotExist(id: PointId): NotFound {
  return new NotFound(`Point with id ${id} does not exists!`);
}
