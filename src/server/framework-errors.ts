// The refusals Fastify and Node's HTTP server make on their own, before any route runs, routed to
// Qdrant's error body like every other error: a URL whose percent-encoding does not decode or
// whose path parameter is too long (Fastify's framework errors), and requests the HTTP parser
// cannot read at all (Node's clientError: malformed, headers too large, too slow). Everything
// else Fastify refuses (bodies too large, unreadable bodies) reaches the app's error handler.

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { errorBody, sendError } from './reply.js';

/** Node's codes for requests its parser gave up on, with the status and message answered. */
function clientRefusal(code: string | undefined): [status: number, message: string] {
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'Bad request: the request line and headers are too large'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Timeout: the request was not received in time'];
  return [400, 'Bad request: malformed HTTP request'];
}

/** Writes the answer straight to the connection: no request object exists for it. */
function onClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const [status, message] = clientRefusal(error.code);
  const body = JSON.stringify(errorBody(message, 0));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Fastify options that send its own refusals through Quiver's error mapping. */
export const FRAMEWORK_ERROR_OPTIONS = {
  frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void sendError(error, request, reply),
  clientErrorHandler: onClientError,
  // While the server drains on shutdown, Fastify would answer new requests on open connections
  // with its own 503 body; the stores stay open until the drain ends, so they are served instead
  // (with `connection: close`).
  return503OnClosing: false,
} satisfies Partial<FastifyServerOptions>;
