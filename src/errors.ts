// Every error Quiver reports, as typed classes. Each carries its HTTP status and the message
// exactly as Qdrant words that kind of failure (prefix included); src/server/reply.ts turns any
// of them into Qdrant's error body in one place. Errors cross worker boundaries as plain
// objects (toWire/fromWire), since structured clone drops class identity.

export abstract class QuiverError extends Error {
  abstract readonly statusCode: number;
  abstract readonly kind: ErrorKind;
}

/** "Wrong input: ..." (400): the request is well-formed but not acceptable. */
export class BadInput extends QuiverError {
  readonly statusCode = 400;
  readonly kind = 'BadInput';
  constructor(description: string) {
    super(`Wrong input: ${description}`);
  }
}

/** "Bad request: ..." (400). */
export class BadRequest extends QuiverError {
  readonly statusCode = 400;
  readonly kind = 'BadRequest';
  constructor(description: string) {
    super(`Bad request: ${description}`);
  }
}

/** A body or query string that does not parse or does not fit the schema (400 unless told, message as is). */
export class FormatError extends QuiverError {
  readonly kind = 'FormatError';
  constructor(message: string, readonly statusCode = 400) {
    super(message);
  }
}

/** A body that parses but fails validation rules (422, message as is). */
export class ValidationError extends QuiverError {
  readonly statusCode = 422;
  readonly kind = 'ValidationError';
}

/** "Not found: ..." (404). */
export class NotFound extends QuiverError {
  readonly statusCode = 404;
  readonly kind = 'NotFound';
  constructor(description: string) {
    super(`Not found: ${description}`);
  }
}

/** "Wrong input: ..." with 409, as Qdrant reports an existing collection or alias. */
export class AlreadyExists extends QuiverError {
  readonly statusCode = 409;
  readonly kind = 'AlreadyExists';
  constructor(description: string) {
    super(`Wrong input: ${description}`);
  }
}

/** 401: no key or a wrong key. */
export class Unauthorized extends QuiverError {
  readonly statusCode = 401;
  readonly kind = 'Unauthorized';
}

/** 403 from authentication itself, message as is: a token that is recognised but refused (bad signature, expired, failed `value_exists`). */
export class RejectedToken extends QuiverError {
  readonly statusCode = 403;
  readonly kind = 'RejectedToken';
}

/** "Forbidden: ..." (403): a valid key that may not do this. */
export class Forbidden extends QuiverError {
  readonly statusCode = 403;
  readonly kind = 'Forbidden';
  constructor(description: string) {
    super(`Forbidden: ${description}`);
  }
}

/**
 * A request strict mode refuses: "Bad request: <what>. Help: <how to comply>" (400; Qdrant
 * answers strict mode refusals with 400 since v1.14.1, so they are not mistaken for key errors).
 */
export class StrictModeViolation extends QuiverError {
  readonly statusCode = 400;
  readonly kind = 'StrictModeViolation';
  constructor(error: string, solution: string) {
    super(`Bad request: ${error}. Help: ${solution}`);
  }
}

/**
 * "Rate limiting exceeded: ..." (429): strict mode's read or write rate limit. `retryAfterSec`
 * (whole seconds, sent as Retry-After) is null when waiting cannot help: the request costs more
 * than the limit allows in a minute.
 */
export class RateLimited extends QuiverError {
  readonly statusCode = 429;
  readonly kind = 'RateLimited';
  constructor(description: string, readonly retryAfterSec: number | null) {
    super(`Rate limiting exceeded: ${description}`);
  }
}

/** "Timeout: ..." (408). */
export class Timeout extends QuiverError {
  readonly statusCode = 408;
  readonly kind = 'Timeout';
  constructor(description: string) {
    super(`Timeout: ${description}`);
  }
}

/** "Checksum mismatch: expected ..., actual ..." (400). */
export class ChecksumMismatch extends QuiverError {
  readonly statusCode = 400;
  readonly kind = 'ChecksumMismatch';
  constructor(expected: string, actual: string) {
    super(`Checksum mismatch: expected ${expected}, actual ${actual}`);
  }
}

/** 507: a resource quota is reached and the update would consume more. */
export class InsufficientStorage extends QuiverError {
  readonly statusCode = 507;
  readonly kind = 'InsufficientStorage';
}

/**
 * "Bad request: ..." (400): operations asked of a shard's log that `wal_config` truncation has
 * removed; a replica that needs them must be sent the shard's records instead.
 */
export class LogTruncated extends QuiverError {
  readonly statusCode = 400;
  readonly kind = 'LogTruncated';
  constructor(description: string) {
    super(`Bad request: ${description}`);
  }
}

/** "Shard temporarily unavailable: ..." (503): no replica of the shards asked for can serve now. */
export class ShardUnavailable extends QuiverError {
  readonly statusCode = 503;
  readonly kind = 'ShardUnavailable';
  constructor(description: string) {
    super(`Shard temporarily unavailable: ${description}`);
  }
}

/** "Service internal error: ..." (500). */
export class ServiceError extends QuiverError {
  readonly statusCode = 500;
  readonly kind = 'ServiceError';
  constructor(description: string) {
    super(`Service internal error: ${description}`);
  }
}

/**
 * A command-line tool (`npx quiver ...`) cannot do what it was asked: a bad flag, a missing data
 * set or file. Not an HTTP error: the CLI prints the message and exits with status 2.
 */
export class CommandError extends Error {}

export type ErrorKind =
  | 'BadInput' | 'BadRequest' | 'FormatError' | 'ValidationError' | 'NotFound' | 'AlreadyExists'
  | 'Unauthorized' | 'RejectedToken' | 'Forbidden' | 'Timeout' | 'ChecksumMismatch' | 'InsufficientStorage' | 'LogTruncated' | 'ShardUnavailable' | 'ServiceError'
  | 'StrictModeViolation' | 'RateLimited';

export interface WireError {
  quiverError: ErrorKind;
  statusCode: number;
  message: string;
}

export function toWire(err: QuiverError): WireError {
  return { quiverError: err.kind, statusCode: err.statusCode, message: err.message };
}

/** Rebuilds an error that crossed a worker boundary, keeping its status and exact message. */
export function fromWire(wire: WireError): QuiverError {
  return new RemoteError(wire.quiverError, wire.statusCode, wire.message);
}

class RemoteError extends QuiverError {
  constructor(readonly kind: ErrorKind, readonly statusCode: number, message: string) {
    super(message);
  }
}

export function isWireError(value: unknown): value is WireError {
  return typeof value === 'object' && value !== null && typeof (value as WireError).quiverError === 'string';
}

export function isQuiverError(value: unknown): value is QuiverError {
  return value instanceof QuiverError;
}
