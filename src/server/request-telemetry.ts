// Records every answered request (route template, method, status, duration) for telemetry and
// metrics. Requests that matched no route are not counted: they have no endpoint to file under.

import type { FastifyInstance } from 'fastify';
import { endpointTemplate, type RequestStats } from '../telemetry/request-stats.js';

export function registerRequestTelemetry(app: FastifyInstance, stats: RequestStats): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === undefined) return;
    stats.record(request.method, endpointTemplate(route), reply.statusCode, reply.elapsedTime * 1000);
  });
}
