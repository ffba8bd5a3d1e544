// The access log: one line per answered request, at INFO, in the format of actix-web's default
// logger middleware that Qdrant's REST server writes (`%a "%r" %s %b "%{Referer}i"
// "%{User-Agent}i" %T`): client address, request line, status, body bytes, referer, user agent,
// seconds taken. It replaces Fastify's own request logging, which writes two JSON lines per
// request (received, completed). Whether it is written is the log filter's say
// (config/log-filter.ts: `actix_web=warn` silences it, as in Qdrant, whatever the global level).

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The line actix-web's default format writes for a request. */
export function accessLine(request: FastifyRequest, reply: FastifyReply, seconds: number): string {
  const raw = request.raw;
  const length = reply.getHeader('content-length');
  const header = (name: string) => {
    const value = raw.headers[name];
    return typeof value === 'string' ? value : '-';
  };
  return `${raw.socket.remoteAddress ?? '-'} "${raw.method} ${raw.url} HTTP/${raw.httpVersion}" ${reply.statusCode} ${length ?? '-'} "${header('referer')}" "${header('user-agent')}" ${seconds.toFixed(6)}`;
}

/** Writes the access log through the server's logger, at INFO whatever the logger's own level. */
export function registerAccessLog(app: FastifyInstance): void {
  const log = app.log.child({}, { level: 'info' });
  // Fastify measures the time from the request's arrival to the end of the answer, as actix's %T
  // does. A callback hook: no promise per request on the hot path.
  app.addHook('onResponse', (request, reply, done) => {
    log.info(accessLine(request, reply, reply.elapsedTime / 1000));
    done();
  });
}
