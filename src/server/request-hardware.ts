// Qdrant's `usage` envelope: with `service.hardware_reporting`, an answer about a collection's
// points (reads, searches, updates, facets, payload indexes) carries `usage.hardware`, what its
// shard tasks used (src/shard/hardware.ts), and `usage.inference` null (BM25 documents are
// turned into vectors without a model, as Qdrant reports them). An update sent with
// `wait=false` is answered before it is applied, so, as in Qdrant, its answer reports none;
// what it uses still counts in the collection's totals. Without the setting there is no `usage`.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { emptyUsage, type HardwareUsage } from '../shard/hardware.js';
import type { HardwareLedger } from '../worker/hardware-ledger.js';

const measuredUsage = Symbol('measuredUsage');

declare module 'fastify' {
  interface FastifyRequest {
    [measuredUsage]?: HardwareUsage;
  }
}

/** Routes whose answers Qdrant measures: a collection's points, facets and payload indexes. */
const MEASURED_ROUTE = /^\/collections\/:name\/(points|facet|index)(\/|$)/;

function reportsUsage(request: FastifyRequest): boolean {
  const route = request.routeOptions.url;
  if (route === undefined || !MEASURED_ROUTE.test(route)) return false;
  const { wait } = (request.query ?? {}) as { wait?: unknown };
  return String(wait) !== 'false';
}

export function registerRequestHardware(app: FastifyInstance, ledger: HardwareLedger, reporting: boolean): void {
  if (!reporting) return;
  // After the body is read (reading it leaves the context a hook entered): the rest of the
  // request, its handler and shard tasks, runs in this context and counts into `usage`.
  app.addHook('preValidation', (request, _reply, done) => {
    if (!reportsUsage(request)) return done();
    const usage = emptyUsage();
    request[measuredUsage] = usage;
    ledger.within(usage, done);
  });
}

/** The `usage` member of the request's answer, if it has one. */
export function usageMember(request: FastifyRequest): { usage?: { hardware: HardwareUsage; inference: null } } {
  const usage = request[measuredUsage];
  return usage ? { usage: { hardware: { ...usage }, inference: null } } : {};
}
