// Qdrant's response envelope, and the one place where errors become HTTP responses.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { SchemaObject } from 'ajv';
import { FormatError, isQuiverError, RateLimited, ServiceError, type QuiverError } from '../errors.js';
import { printJson } from '../json/print.js';
import { usageMember } from './request-hardware.js';

const started = Symbol('started');
/** An answer's compiled serialiser, if its route has one (answer-serializers.ts); a symbol, so no printer sees it. */
const compiledPrinter = Symbol('compiledPrinter');

type Printer = (payload: unknown) => string;

declare module 'fastify' {
  interface FastifyRequest {
    [started]: number;
  }
}

export function markStart(request: FastifyRequest): void {
  request[started] = performance.now();
}

function elapsed(request: FastifyRequest): number {
  return (performance.now() - (request[started] ?? performance.now())) / 1000;
}

export function ok<T>(request: FastifyRequest, result: T): { result: T; status: 'ok'; time: number } {
  return { result, status: 'ok', time: elapsed(request), ...usageMember(request) };
}

/**
 * ok(), printed by the route's compiled serialiser for `schema` (compiled once per route, by
 * Fastify's serialiser compiler) instead of printJson; see answer-serializers.ts.
 */
export function okCompiled<T>(request: FastifyRequest, reply: FastifyReply, schema: SchemaObject, result: T): { result: T; status: 'ok'; time: number } {
  const answer = ok(request, result);
  Object.defineProperty(answer, compiledPrinter, { value: reply.compileSerializationSchema(schema) });
  return answer;
}

/**
 * The server's reply serialiser: the answer's compiled serialiser when it has one and it takes
 * every value, printJson otherwise (JSON.stringify, with bigints as integers). Both print the same
 * text; the compiled one refuses what it cannot print as JSON.stringify would (a bigint, a NaN).
 */
export function printReply(payload: unknown): string {
  const compiled = (payload as { [compiledPrinter]?: Printer } | null)?.[compiledPrinter];
  if (compiled !== undefined) {
    try {
      return compiled(payload);
    } catch {
      // printed below
    }
  }
  return printJson(payload);
}

/** Qdrant's error body. */
export function errorBody(message: string, time: number): { status: { error: string }; time: number } {
  return { status: { error: message }, time };
}

/** Maps anything thrown while serving a request, by Quiver or by Fastify itself, to Qdrant's error body and status code. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const err = toQuiverError(error, request);
  if (err.statusCode >= 500) request.log.error({ err: error }, 'request failed');
  // Qdrant refuses unreadable or invalid requests in its extractors, before any handler has run,
  // and reports them with time 0.
  const extractor = err.kind === 'FormatError' || err.kind === 'ValidationError';
  const time = extractor ? 0 : elapsed(request);
  // Qdrant suggests when a rate-limited request may succeed.
  if (err instanceof RateLimited && err.retryAfterSec !== null) reply.header('retry-after', String(err.retryAfterSec));
  // A handler's failure still reports what it used, as Qdrant's does.
  return reply.code(err.statusCode).send({ ...errorBody(err.message, time), ...(extractor ? {} : usageMember(request)) });
}

function toQuiverError(error: unknown, request: FastifyRequest): QuiverError {
  if (isQuiverError(error)) return error;
  const fastifyError = error as Partial<FastifyError>;
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode < 500) return fromFastify(fastifyError, request);
  return new ServiceError(error instanceof Error ? error.message : String(error));
}

/**
 * Fastify's own refusals, worded as Qdrant (actix-web) words the same failure: a body over the
 * limit is actix's JSON payload error, reported by Qdrant as a 400; other body-reading failures
 * are payload errors too; the rest (a malformed URL, a path parameter too long) keep Fastify's
 * status with its description.
 */
function fromFastify(error: Partial<FastifyError>, request: FastifyRequest): QuiverError {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const limit = request.routeOptions.bodyLimit;
    const length = request.headers['content-length'];
    return new FormatError(length === undefined
      ? `Payload error: JSON payload has exceeded limit (${limit} bytes).`
      : `Payload error: JSON payload (${length} bytes) is larger than allowed (limit: ${limit} bytes).`);
  }
  const message = error.message ?? 'invalid request';
  if (error.code?.startsWith('FST_ERR_CTP_')) return new FormatError(`Payload error: ${message}`);
  return new FormatError(`Bad request: ${message}`, error.statusCode);
}
