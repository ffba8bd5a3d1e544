// Qdrant's response envelope, and the one place where errors become HTTP responses.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { FormatError, isQuiverError, ServiceError, type QuiverError } from '../errors.js';

const started = Symbol('started');

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
  return { result, status: 'ok', time: elapsed(request) };
}

/** Maps anything thrown by a handler to Qdrant's error body and status code. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const err = toQuiverError(error);
  if (err.statusCode >= 500) request.log.error({ err: error }, 'request failed');
  return reply.code(err.statusCode).send({ status: { error: err.message }, time: elapsed(request) });
}

function toQuiverError(error: unknown): QuiverError {
  if (isQuiverError(error)) return error;
  const fastifyError = error as Partial<FastifyError>;
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode < 500) {
    // Fastify's own body errors: empty body, bad content type, body too large, unparseable JSON.
    return new FormatError(`Format error in JSON body: ${fastifyError.message ?? 'invalid body'}`, fastifyError.statusCode);
  }
  return new ServiceError(error instanceof Error ? error.message : String(error));
}
