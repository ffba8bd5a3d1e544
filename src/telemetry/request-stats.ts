// Counts and durations of REST responses, per endpoint (method + route template) and status
// code, as Qdrant keeps them for `requests.rest.responses` in telemetry and the `rest_responses_*`
// metric families.

/** Upper bounds (seconds) of the duration histogram buckets Qdrant exports. */
export const DURATION_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 5, 10, 50];

/** Qdrant averages the latest operations only. */
const AVERAGE_WINDOW = 128;

export interface DurationStats {
  count: number;
  avg_duration_micros: number;
  min_duration_micros: number;
  max_duration_micros: number;
  total_duration_micros: number;
  last_responded: string;
  /** Cumulative counts per bucket of DURATION_BUCKETS_SECONDS. */
  buckets: number[];
}

class Accumulator {
  count = 0;
  min = Infinity;
  max = 0;
  total = 0;
  last = new Date(0);
  private readonly recent: number[] = [];
  private readonly buckets = DURATION_BUCKETS_SECONDS.map(() => 0);

  add(micros: number, at: Date): void {
    this.count++;
    this.min = Math.min(this.min, micros);
    this.max = Math.max(this.max, micros);
    this.total += micros;
    this.last = at;
    this.recent.push(micros);
    if (this.recent.length > AVERAGE_WINDOW) this.recent.shift();
    const seconds = micros / 1e6;
    DURATION_BUCKETS_SECONDS.forEach((bound, i) => {
      if (seconds <= bound) this.buckets[i]++;
    });
  }

  stats(): DurationStats {
    return {
      count: this.count,
      avg_duration_micros: this.recent.reduce((a, b) => a + b, 0) / this.recent.length,
      min_duration_micros: this.min,
      max_duration_micros: this.max,
      total_duration_micros: Math.round(this.total),
      last_responded: this.last.toISOString(),
      buckets: [...this.buckets],
    };
  }
}

/** Endpoint key as Qdrant writes it: "POST /collections/{collection_name}/points". */
export type EndpointKey = string;

export class RequestStats {
  private readonly byEndpoint = new Map<EndpointKey, Map<number, Accumulator>>();

  record(method: string, endpoint: string, status: number, micros: number): void {
    const key = `${method} ${endpoint}`;
    let statuses = this.byEndpoint.get(key);
    if (!statuses) this.byEndpoint.set(key, (statuses = new Map()));
    let acc = statuses.get(status);
    if (!acc) statuses.set(status, (acc = new Accumulator()));
    acc.add(micros, new Date());
  }

  snapshot(): Map<EndpointKey, Map<number, DurationStats>> {
    return new Map([...this.byEndpoint].map(([key, statuses]) => [key, new Map([...statuses].map(([status, acc]) => [status, acc.stats()]))]));
  }
}

/** Fastify's route pattern in Qdrant's template form: /collections/:name/index/:field -> /collections/{collection_name}/index/{field_name}. */
export function endpointTemplate(route: string): string {
  const names: Record<string, string> = { name: 'collection_name', field: 'field_name' };
  return route.replace(/:([A-Za-z_]+)/g, (_, param: string) => `{${names[param] ?? param}}`);
}
