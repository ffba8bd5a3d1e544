// `quiver bench sparse`: options, the run, the table on stdout and the JSON result file.

import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { sparseBench, type SparseBenchOptions, type SparseBenchReport } from '../bench/sparse.js';
import type { SparseDatatype } from '../engine/index.js';
import { CommandError } from '../errors.js';
import { helpText, int, parseOptions, type CommandSpec } from './options.js';
import { terminalProgress } from './progress.js';
import { renderTable, type Column } from './table.js';

export const SPARSE_SPEC: CommandSpec = {
  usage: 'quiver bench sparse [options]',
  summary: 'The engine\'s sparse vector index (Qdrant\'s sparse vectors) in this process, one thread, on synthetic SPLADE-like\n'
    + 'data (Zipf-like terms): build time, memory, byte image, and QPS / latency of the pruned top-k path and of the\n'
    + 'exact scan of every allowed document, unfiltered and filtered, with the pruned path\'s recall@k against the scan.',
  options: [
    { name: 'size', value: 'N', default: '200000', help: 'documents' },
    { name: 'queries', value: 'N', default: '200', help: 'queries' },
    { name: 'vocabulary', value: 'N', default: '30000', help: 'distinct terms (indices)' },
    { name: 'doc-nonzeros', value: 'N', default: '120', help: 'mean non-zeros per document' },
    { name: 'query-nonzeros', value: 'N', default: '20', help: 'mean non-zeros per query' },
    { name: 'k', value: 'N', default: '10', help: 'results per query (recall@k)' },
    { name: 'seed', value: 'N', default: '7', help: 'random seed of the data' },
    { name: 'filters', value: 'LIST', default: '1,0.1,0.01', help: 'shares of documents a filter allows, one run each (1: no filter)' },
    { name: 'repeats', value: 'N', default: '1', help: 'timed passes per run; the fastest counts' },
    { name: 'datatype', value: 'TYPE', default: 'float32', help: 'posting values: float32, float16 or uint8 (Qdrant\'s sparse index datatype); recall is then against a float32 index' },
    { name: 'out', value: 'DIR', default: 'bench-results', help: 'where the JSON result goes' },
    { name: 'quiet', help: 'no progress on stderr' },
  ],
  epilog: ['Example: npx quiver bench sparse --size 50000 --filters 1,0.05'],
};

export interface SparseBenchResult {
  mode: 'sparse';
  command: string;
  startedAt: string;
  machine: { node: string; platform: string; arch: string; cpus: number; cpuModel: string };
  options: SparseBenchOptions;
  report: SparseBenchReport;
}

function datatypeOf(text: string): SparseDatatype {
  if (text === 'float32' || text === 'float16' || text === 'uint8') return text;
  throw new CommandError(`--datatype takes float32, float16 or uint8, got "${text}"`);
}

function shares(text: string): number[] {
  const list = text.split(',').map((s) => Number(s.trim()));
  if (list.some((x) => !(x > 0 && x <= 1))) throw new CommandError(`--filters takes shares in (0, 1] separated by commas, got "${text}"`);
  return list;
}

export function sparseTable(report: SparseBenchReport, k: number): string {
  const columns: Column[] = [
    { title: 'path', align: 'left' }, { title: 'filter', align: 'right' }, { title: 'allowed', align: 'right' }, { title: `recall@${k}`, align: 'right' },
    { title: 'identical', align: 'right' }, { title: 'QPS', align: 'right' }, { title: 'p50 ms', align: 'right' }, { title: 'p99 ms', align: 'right' },
  ];
  return renderTable(columns, report.rows.map((r) => [
    r.path, r.filter >= 1 ? 'none' : `${+(r.filter * 100).toFixed(3)}%`, String(r.allowed), r.recall.toFixed(4), `${r.identical}/${r.queries}`,
    r.qps.toFixed(1), r.p50Ms.toFixed(3), r.p99Ms.toFixed(3),
  ]));
}

/** Runs `quiver bench sparse ...` (args after "sparse"); returns the exit status. */
export async function sparseBenchCommand(args: string[]): Promise<number> {
  const values = parseOptions(SPARSE_SPEC, args);
  if (values.help) {
    console.log(helpText(SPARSE_SPEC));
    return 0;
  }
  const options: SparseBenchOptions = {
    documents: int(values, 'size'),
    queries: int(values, 'queries'),
    vocabulary: int(values, 'vocabulary'),
    documentNonZeros: int(values, 'doc-nonzeros'),
    queryNonZeros: int(values, 'query-nonzeros'),
    k: int(values, 'k'),
    seed: int(values, 'seed'),
    filters: shares(String(values.filters)),
    repeats: int(values, 'repeats'),
    datatype: datatypeOf(String(values.datatype)),
  };
  if (options.documentNonZeros > options.vocabulary || options.queryNonZeros > options.vocabulary) throw new CommandError('--doc-nonzeros and --query-nonzeros must not exceed --vocabulary');
  const cpu = cpus();
  const startedAt = new Date().toISOString();
  const report = await sparseBench(options, terminalProgress(process.stderr, values.quiet === true));
  const result: SparseBenchResult = {
    mode: 'sparse',
    command: ['quiver', 'bench', 'sparse', ...args].join(' '),
    startedAt,
    machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpu.length, cpuModel: cpu[0]?.model ?? 'unknown' },
    options,
    report,
  };
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  console.log(`\nsparse mode on this process: ${options.documents} documents (${report.postings} non-zeros, ${report.terms} terms), ${options.queries} queries of ~${options.queryNonZeros} non-zeros, k=${options.k}, datatype ${options.datatype}`);
  console.log(`build ${report.buildSeconds.toFixed(2)} s (${(report.postings / report.buildSeconds / 1e6).toFixed(2)} M non-zeros/s), memory ${mb(report.memoryBytes)} MB (data ${mb(report.dataBytes)} MB, of which posting lists ${mb(report.postingBytes)} MB), byte image ${mb(report.imageBytes)} MB (write ${report.serializeSeconds.toFixed(2)} s, load ${report.loadSeconds.toFixed(2)} s)\n`);
  console.log(sparseTable(report, options.k));
  const dir = String(values.out);
  await mkdir(dir, { recursive: true });
  const file = join(dir, `sparse-synthetic-${startedAt.replace(/[:.]/g, '-')}.json`);
  await writeFile(file, JSON.stringify(result, null, 2) + '\n');
  console.log(`\nresults: ${file}`);
  return 0;
}
