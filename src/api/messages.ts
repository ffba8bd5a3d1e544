// Qdrant's wording of the errors Quiver reports, each as the typed error carrying Qdrant's status
// code. Sources are Qdrant's code (lib/storage/src/content_manager/errors.rs for the prefixes,
// the named files below for the descriptions) and responses of real Qdrant servers in bug reports.

import { AlreadyExists, BadInput, FormatError, NotFound, ValidationError } from '../errors.js';
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

/** segment's OperationError::VectorNameNotExists. */
export function vectorNameNotFound(name: string): BadInput {
  return new BadInput(`Not existing vector name error: ${name}`);
}

/** An unnamed vector sent to a collection that has only named ones. */
export function defaultVectorNotFound(): BadInput {
  return new BadInput('Default vector config is not found in collection');
}

/** CollectionError::PointNotFound, turned into a storage NotFound. */
export function pointNotFound(id: PointId): NotFound {
  return new NotFound(`No point with id ${id} found`);
}

/** src/actix/api/retrieve_api.rs: GET of one point whose path id is neither an unsigned integer nor a UUID. */
export function unrecognizedPointId(raw: string): BadInput {
  return new BadInput(`Can not recognize "${raw}" as point id`);
}

/** src/actix/api/retrieve_api.rs: GET of one point that does not exist (its own wording, not PointNotFound's). */
export function pointDoesNotExist(id: PointId): NotFound {
  return new NotFound(`Point with id ${id} does not exists!`);
}

/** segment's OperationError::MissingRangeIndexForOrderBy, reported as bad input. */
export function missingRangeIndexForOrderBy(key: string): BadInput {
  return new BadInput(
    `No range index for \`order_by\` key: \`${key}\`. Please create one to use \`order_by\`. ` +
      'Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Range conditions',
  );
}

/** segment's OperationError::MissingMapIndexForFacet, reported as bad input. */
export function missingIndexForFacet(key: string): BadInput {
  return new BadInput(
    `No appropriate index for faceting: \`${key}\`. Please create one to facet on this field. ` +
      'Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Match conditions',
  );
}

/** Quiver stores dense vectors only; other vector inputs Qdrant accepts are refused as bad input. */
export function unsupportedVectorInput(kind: 'sparse vector' | 'multivector' | 'inference input'): BadInput {
  return new BadInput(`Quiver supports dense vectors only, got a ${kind}`);
}

/** lib/collection/src/config.rs, updating params of a vector the collection does not have. */
export function vectorParamsNotInConfig(name: string): BadInput {
  if (name === '') return new BadInput('Default vector params are not specified in config');
  return new BadInput(`Vector params for ${name} are not specified in config`);
}
