// Counts and durations of REST responses, per endpoint (method + route template) and status
// code, as Qdrant keeps them for `requests.rest.responses` in telemetry and the `rest_responses_*`
// metric families (whose duration histogram is observed here, response by response).

import type { Histogram } from 'prom-client';
import { REPORTED_ENDPOINTS, responseDurationHistogram, TIMED_STATUS, type ResponseLabel } from './reported-responses.js';

/** Qdrant averages the latest operations only. */
const AVERAGE_WINDOW = 128;

export interface DurationStats {
  count: number;
  avg_duration_micros: number;
  min_duration_micros: number;
  max_duration_micros: number;
  total_duration_micros: number;
  last_responded: string;
}

class Accumulator {
  count = 0;
  min = Infinity;
  max = 0;
  total = 0;
  /** Epoch milliseconds of the latest response: a Date is made only when telemetry is read. */
  last = 0;
  /** The latest AVERAGE_WINDOW durations, a ring: `next` is where the next one goes. */
  private readonly recent: number[] = [];
  private next = 0;

  add(micros: number, at: number): void {
    this.count++;
    this.min = Math.min(this.min, micros);
    this.max = Math.max(this.max, micros);
    this.total += micros;
    this.last = at;
    if (this.recent.length < AVERAGE_WINDOW) this.recent.push(micros);
    else this.recent[this.next] = micros;
    this.next = (this.next + 1) % AVERAGE_WINDOW;
  }

  stats(): DurationStats {
    // Summed oldest first, as the window was kept before it became a ring.
    const full = this.recent.length === AVERAGE_WINDOW;
    let sum = 0;
    for (let i = 0; i < this.recent.length; i++) sum += this.recent[full ? (this.next + i) % AVERAGE_WINDOW : i];
    return {
      count: this.count,
      avg_duration_micros: sum / this.recent.length,
      min_duration_micros: this.min,
      max_duration_micros: this.max,
      total_duration_micros: Math.round(this.total),
      last_responded: new Date(this.last).toISOString(),
    };
  }
}

/** Endpoint key as Qdrant writes it: "POST /collections/{collection_name}/points". */
export type EndpointKey = string;

export class RequestStats {
  private readonly byEndpoint = new Map<EndpointKey, Map<number, Accumulator>>();
  /** `rest_responses_duration_seconds`, for the responses Qdrant's metrics time. */
  readonly durations: Histogram<ResponseLabel> = responseDurationHistogram();

  record(method: string, endpoint: string, status: number, micros: number): void {
    const key = `${method} ${endpoint}`;
    let statuses = this.byEndpoint.get(key);
    if (!statuses) this.byEndpoint.set(key, (statuses = new Map()));
    let acc = statuses.get(status);
    if (!acc) statuses.set(status, (acc = new Accumulator()));
    acc.add(micros, Date.now());
    // Whole microseconds, the resolution of Qdrant's timings (its `_sum` has six decimals).
    if (status === TIMED_STATUS && REPORTED_ENDPOINTS.has(endpoint)) this.durations.observe({ method, endpoint, status: String(status) }, Math.round(micros) / 1e6);
  }

  snapshot(): Map<EndpointKey, Map<number, DurationStats>> {
    return new Map([...this.byEndpoint].map(([key, statuses]) => [key, new Map([...statuses].map(([status, acc]) => [status, acc.stats()]))]));
  }
}

const templates = new Map<string, string>();

/**
 * Fastify's route pattern in Qdrant's template form: /collections/:name/index/:field ->
 * /collections/{collection_name}/index/{field_name}. Worked out once per route (routes are few
 * and fixed), as every answered request asks.
 */
export function endpointTemplate(route: string): string {
  let template = templates.get(route);
  if (template === undefined) {
    const names: Record<string, string> = { name: 'collection_name', field: 'field_name' };
    template = route.replace(/:([A-Za-z_]+)/g, (_, param: string) => `{${names[param] ?? param}}`);
    templates.set(route, template);
  }
  return template;
}
