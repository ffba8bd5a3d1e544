// Qdrant's wording of the errors about a request's form (the inner layers' are in
// src/messages.ts), each as the typed error carrying Qdrant's status code. Sources are Qdrant's
// code (the named files below) and responses of real Qdrant servers in bug reports.

import { BadInput, FormatError, NotFound, ValidationError } from '../errors.js';
import type { PointId } from '../model.js';

/** Where a request part came from, as Qdrant names it in format and validation errors. */
export type RequestPart = 'JSON body' | 'query parameters' | 'path parameters';

/** serde could not read the part (src/actix/mod.rs validation_error_handler): 400. */
export function formatError(detail: string, part: RequestPart = 'JSON body'): FormatError {
  // actix-web-validator files body errors as JSON payload errors and the others as deserialize ones.
  const prefix = part === 'JSON body' ? 'Format error' : 'Deserialize error';
  return new FormatError(`${prefix} in ${part}: ${detail}`);
}

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

/** src/actix/api/retrieve_api.rs: GET of one point whose path id is neither an unsigned integer nor a UUID. */
export function unrecognizedPointId(raw: string): BadInput {
  return new BadInput(`Can not recognize "${raw}" as point id`);
}

/** src/actix/api/retrieve_api.rs: GET of one point that does not exist (its own wording, not PointNotFound's). */
export function pointDoesNotExist(id: PointId): NotFound {
  return new NotFound(`Point with id ${id} does not exists!`);
}
