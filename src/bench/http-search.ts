// k-NN queries through Qdrant's query API from `concurrency` parallel requests: what came back
// for each query, requests per second and per-request latency.

import { rowsOf, type Dataset } from './dataset.js';
import type { HttpTarget } from './http-target.js';
import type { ProgressTask } from './progress.js';
import type { RecallJudge } from './recall.js';
import { quantile, type SweepPoint } from './sweep.js';

export interface QueryParams {
  hnsw_ef?: number;
  exact?: boolean;
  quantization?: { rescore: boolean; oversampling: number };
}

export async function httpSweepPoint(http: HttpTarget, collection: string, data: Dataset, k: number, params: QueryParams, concurrency: number, judge: RecallJudge, task: ProgressTask): Promise<SweepPoint> {
  const queries = rowsOf(data.queries, data.dim).map((q) => Array.from(q));
  const found: number[][] = new Array(queries.length);
  const latencies: number[] = new Array(queries.length);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < queries.length) {
      const q = next++;
      const t = performance.now();
      const result = await http.call<{ points: { id: number }[] }>('POST', `/collections/${collection}/points/query`, { query: queries[q], limit: k, params });
      latencies[q] = performance.now() - t;
      found[q] = result.points.map((p) => p.id);
      task.tick();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ef: params.hnsw_ef ?? null,
    recall: judge.recall(found),
    qps: queries.length / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    queries: queries.length,
  };
}
