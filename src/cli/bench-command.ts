// `quiver bench engine|server|ingest|sparse|multivector`: load a data set, compute (or reuse) its exact ground
// truth, run the mode, print the table, write the JSON result and the plot.

import { cpus } from 'node:os';
import { defaultFashionMnistDir } from '../bench/fashion-mnist.js';
import { EMBEDDING_DEFAULTS, loadDataset, type Dataset } from '../bench/dataset.js';
import { DEFAULT_CACHE_DIR, groundTruth } from '../bench/ground-truth.js';
import { openTarget } from '../bench/http-target.js';
import { engineMode, ingestMode, serverMode, type SweepOptions } from '../bench/modes.js';
import { multivectorMode } from '../bench/multivector-mode.js';
import { hotPathMode, type HotPathOptions } from '../bench/hot-path.js';
import { HOT_PATH_LOADS, type BenchMode, type BenchResult } from '../bench/result.js';
import { DEFAULT_ENGINES, ENGINES, ORIGINALS } from '../bench/runners.js';
import { CLOCKS } from '../bench/sweep.js';
import { COMPRESSIONS, DATATYPES, DISTANCES, TURBO_BITS, type Distance } from '../engine/index.js';
import { CommandError } from '../errors.js';
import { choice, choices, helpText, int, intList, optionalInt, parseOptions, type CommandSpec, type OptionSpec, type ParsedOptions } from './options.js';
import { terminalProgress } from './progress.js';
import { comparisons, heading, resultTable, writeResult } from './report.js';
import { hotPathLines, hotPathTable } from './hot-path-report.js';
import { PEER, targetsTable } from './targets.js';
import { sparseBenchCommand } from './bench-sparse.js';

/** What a mode loads unless told: server mode defaults to issue 16's 50000 synthetic points. */
interface DataDefaults {
  dataset: string;
  syntheticSize: number;
}

const DATA_DEFAULTS: DataDefaults = { dataset: 'fashion-mnist', syntheticSize: 10000 };
const SERVER_DATA_DEFAULTS: DataDefaults = { dataset: 'synthetic', syntheticSize: 50000 };

const dataOptions = (defaults: DataDefaults): OptionSpec[] => [
  { name: 'dataset', value: 'SOURCE', default: defaults.dataset, help: 'fashion-mnist, synthetic, embeddings (normalised 1536-d topics, cached), or a .fvecs/.npy/.json file of vectors' },
  { name: 'query-file', value: 'FILE', help: 'queries for a file data set (else its last --queries rows are held out)' },
  { name: 'queries', value: 'N', help: 'number of queries (default: all of Fashion-MNIST\'s 10000; 1000 synthetic and embeddings; 10% of a file, at most 1000)' },
  { name: 'distance', value: 'NAME', help: `${DISTANCES.join(', ')} (default: Euclid; synthetic and embeddings: Cosine)` },
  { name: 'size', value: 'N', help: `synthetic, embeddings: base vectors (default: synthetic ${defaults.syntheticSize}; embeddings ${EMBEDDING_DEFAULTS.size})` },
  { name: 'dim', value: 'N', help: `synthetic, embeddings: dimension (default: 128; embeddings ${EMBEDDING_DEFAULTS.dim})` },
  { name: 'clusters', value: 'N', help: `synthetic: gaussian clusters, embeddings: topics (default: 32; embeddings ${EMBEDDING_DEFAULTS.clusters})` },
  { name: 'seed', value: 'N', default: '7', help: 'synthetic, embeddings: random seed' },
  { name: 'fashion-mnist-dir', value: 'DIR', default: defaultFashionMnistDir(), help: 'Debian\'s dataset-fashion-mnist files (env QUIVER_FASHION_MNIST_DIR)' },
  { name: 'k', value: 'N', default: '10', help: 'neighbours per query (recall@k)' },
];
const DATA_OPTIONS = dataOptions(DATA_DEFAULTS);

const graphOptions = (efs: string): OptionSpec[] => [
  { name: 'm', value: 'LIST', default: '16', help: 'HNSW m values to sweep' },
  { name: 'ef-construct', value: 'LIST', default: '100', help: 'HNSW ef_construct values to sweep' },
  { name: 'ef', value: 'LIST', default: efs, help: 'search ef (hnsw_ef) values to sweep' },
  { name: 'oversampling', value: 'N', default: '2', help: 'int8, binary, product and turbo: candidates per result rescored with the stored vectors' },
];
const GRAPH_OPTIONS = graphOptions('10,20,40,80,120,200,400');

const OUTPUT_OPTIONS: OptionSpec[] = [
  { name: 'out', value: 'DIR', default: 'bench-results', help: 'where the JSON result and the SVG/PNG plot go' },
  { name: 'cache-dir', value: 'DIR', default: DEFAULT_CACHE_DIR, help: 'where exact ground truth and generated embedding sets are cached' },
  { name: 'quiet', help: 'no progress on stderr' },
];

const HTTP_OPTIONS: OptionSpec[] = [
  { name: 'url', value: 'URL', help: 'a running Quiver or any Qdrant-compatible server (default: start Quiver on a free loopback port)' },
  { name: 'api-key', value: 'KEY', help: 'sent as the api-key header' },
  { name: 'concurrency', value: 'N', default: '16', help: 'requests in flight at once' },
  { name: 'workers', value: 'N', default: String(cpus().length), help: 'shard workers of the server started without --url' },
];

/** Server mode's loads: the recall/QPS sweep and the hot-path loads. */
const SERVER_LOADS = ['sweep', ...HOT_PATH_LOADS] as const;

export const BENCH_SPECS: Record<BenchMode, CommandSpec> = {
  engine: {
    usage: 'quiver bench engine [options]',
    summary: 'Quiver\'s engine (f32 and int8), hnswlib-node and a flat exact scan in this process, one thread each:\nrecall@k, QPS, p50/p99 latency, build time and memory over the m x ef_construct x ef grid.',
    options: [
      ...DATA_OPTIONS,
      { name: 'engines', value: 'LIST', default: DEFAULT_ENGINES.join(','), help: `engines to compare (${ENGINES.join(', ')})` },
      ...GRAPH_OPTIONS,
      { name: 'repeats', value: 'N', default: '2', help: 'timed passes per ef; the fastest counts' },
      { name: 'exact-queries', value: 'N', default: '200', help: 'queries the flat exact scan answers (it is slow on large sets)' },
      { name: 'clock', value: 'NAME', default: 'wall', help: 'what QPS is counted in: wall (elapsed time) or cpu (this process\'s CPU time, steadier on a shared machine)' },
      { name: 'datatype', value: 'LIST', default: 'float32', help: `element types Quiver's engines store vectors in, each run in turn (${DATATYPES.join(', ')}; Qdrant's datatype)` },
      { name: 'pq-compression', value: 'LIST', default: 'x16', help: `quiver-pq: product quantization's compressions, each run in turn (${COMPRESSIONS.join(', ')}; Qdrant's product.compression)` },
      { name: 'turbo-bits', value: 'LIST', default: 'bits4', help: `quiver-turbo: TurboQuant's bit widths, each run in turn (${TURBO_BITS.join(', ')}; Qdrant's turbo.bits)` },
      { name: 'originals', value: 'LIST', default: 'memory', help: `where Quiver's engines keep the stored vectors, each run in turn (${ORIGINALS.join(', ')}: cold = read on demand from a page file, as a collection with on_disk: true originals and always_ram: true codes; cold+graph = the HNSW graph too, as hnsw_config on_disk: true)` },
      ...OUTPUT_OPTIONS,
    ],
    epilog: [
      'Example: npx quiver bench engine --dataset synthetic --size 20000 --dim 96 --distance Cosine --m 8,16 --ef 16,32,64',
      'Example: npx quiver bench engine --engines quiver-f32,quiver-int8 --datatype float32,float16,uint8',
      'Example: npx quiver bench engine --engines quiver-f32,quiver-turbo --turbo-bits bits4,bits2,bits1_5,bits1',
      'Example: npx quiver bench engine --engines quiver-binary,hnswlib --originals memory,cold',
    ],
  },
  server: {
    usage: 'quiver bench server [options]',
    summary: 'A server through its HTTP API with concurrent keep-alive requests. The hot-path loads (issue 16) run on one collection\n'
      + 'of --shards shards: single queries, batches, queries with a 10% filter on an indexed and on an unindexed payload field\n'
      + '(closed loops), single queries at a fixed offered rate (open loop: latency from each request\'s due time), wait=true\n'
      + 'upserts, and a Quiver\'s start on empty storage until /readyz; each with the load generator\'s own CPU, then the served\n'
      + 'queries/s over the same data\'s in-process queries/s (one thread) and over the HTTP floor\'s (http-floor: the single-query\n'
      + 'loop against a bare Fastify process answering ten canned hits, the most this HTTP stack serves here). The sweep load loads the data set into a collection\n'
      + 'per m x ef_construct and sweeps hnsw_ef for recall and QPS; int8 adds a scalar-quantized collection, flat an exact search.',
    options: [
      ...dataOptions(SERVER_DATA_DEFAULTS),
      { name: 'loads', value: 'LIST', help: `what to measure: ${SERVER_LOADS.join(', ')} (default: every load but sweep; start only without --url)` },
      { name: 'engines', value: 'LIST', default: 'quiver-f32,flat', help: 'sweep: quiver-f32 (HNSW), quiver-int8 (scalar quantization), flat (params.exact)' },
      ...graphOptions('64'),
      ...HTTP_OPTIONS,
      { name: 'batch', value: 'N', default: '256', help: 'points per upsert while loading and in the upsert load' },
      { name: 'shards', value: 'N', default: '2', help: 'hot-path loads: shard_number of the collection' },
      { name: 'seconds', value: 'N', default: '10', help: 'hot-path loads: timed window of each query load (after a 1 s warm-up)' },
      { name: 'query-batch', value: 'N', default: '16', help: 'batch load: queries per /points/query/batch request' },
      { name: 'upsert-clients', value: 'N', default: '4', help: 'upsert load: clients upserting at once (wait=true)' },
      { name: 'rate', value: 'N', default: '1000', help: 'open-loop load: requests offered per second (at most --concurrency in flight; more are dropped and counted)' },
      ...OUTPUT_OPTIONS,
    ],
    epilog: [
      'Example: npx quiver bench server                      # issue 16\'s table against a Quiver started on a free port',
      'Example: npx quiver bench server --url http://127.0.0.1:6333 --loads query,open-loop --rate 2000',
      'Example: npx quiver bench server --loads sweep --dataset fashion-mnist --ef 16,32,64,128 --concurrency 32',
    ],
  },
  ingest: {
    usage: 'quiver bench ingest [options]',
    summary: 'Upsert throughput through the HTTP API and the time until the collection is searchable, per batch size,\nwith a recall check of the result.',
    options: [
      ...DATA_OPTIONS,
      { name: 'm', value: 'N', default: '16', help: 'HNSW m of the collection' },
      { name: 'ef-construct', value: 'N', default: '100', help: 'HNSW ef_construct of the collection' },
      ...HTTP_OPTIONS,
      { name: 'batch', value: 'LIST', default: '64,256,1024', help: 'points per upsert; one run per value' },
      { name: 'wait', value: 'LIST', default: 'false', help: 'the upserts\' wait parameter: false (answer once durable), true (once applied), or both: false,true' },
      ...OUTPUT_OPTIONS,
    ],
    epilog: ['Example: npx quiver bench ingest --dataset vectors.npy --batch 100,1000 --concurrency 4'],
  },
  multivector: {
    usage: 'quiver bench multivector [options]',
    summary: 'Quiver\'s engine over synthetic multivectors (a list of vectors per point, MaxSim) in this process, one thread:\n'
      + 'build time, memory, and recall@k and QPS of the HNSW per ef against the exact MaxSim scan of the same index.',
    options: [
      { name: 'size', value: 'N', default: '5000', help: 'points' },
      { name: 'dim', value: 'N', default: '128', help: 'dimension of each vector' },
      { name: 'vectors', value: 'N', default: '16', help: 'vectors per point (with --min-vectors: the most)' },
      { name: 'min-vectors', value: 'N', help: 'fewest vectors per point, drawn uniformly up to --vectors (default: --vectors)' },
      { name: 'queries', value: 'N', default: '100', help: 'queries' },
      { name: 'query-vectors', value: 'N', default: '16', help: 'vectors per query' },
      { name: 'topics', value: 'N', default: '64', help: 'topics the lists are drawn from' },
      { name: 'seed', value: 'N', default: '7', help: 'random seed' },
      { name: 'distance', value: 'NAME', default: 'Cosine', help: DISTANCES.join(', ') },
      { name: 'k', value: 'N', default: '10', help: 'neighbours per query (recall@k)' },
      { name: 'm', value: 'N', default: '16', help: 'HNSW m' },
      { name: 'ef-construct', value: 'N', default: '100', help: 'HNSW ef_construct' },
      { name: 'ef', value: 'LIST', default: '16,32,64,128', help: 'search ef (hnsw_ef) values to sweep' },
      { name: 'repeats', value: 'N', default: '2', help: 'timed passes per ef; the fastest counts' },
      { name: 'exact-queries', value: 'N', default: '20', help: 'queries the exact scan is timed on (all get ground truth)' },
      { name: 'int8', help: 'also build an int8-quantized index (scalar quantization of every vector) and sweep it' },
      { name: 'oversampling', value: 'N', default: '2', help: 'int8: candidates per result rescored with f32 MaxSim' },
      { name: 'cold', help: 'also sweep each index with its lists cold (read on demand from a page file, 8 MiB resident; codes in memory)' },
      { name: 'out', value: 'DIR', default: 'bench-results', help: 'where the JSON result and the SVG/PNG plot go' },
      { name: 'quiet', help: 'no progress on stderr' },
    ],
    epilog: ['Example: npx quiver bench multivector --size 20000 --vectors 32 --query-vectors 32 --dim 128 --ef 32,64'],
  },
};

export const BENCH_SPEC: CommandSpec = {
  usage: 'quiver bench <engine|server|ingest|sparse|multivector> [options]',
  summary: 'Benchmarks Quiver against the libraries you would pick instead, on Fashion-MNIST, synthetic clusters or your own vectors.\n\n'
    + '  engine   in-process: Quiver f32/int8 vs hnswlib-node vs a flat exact scan\n'
    + '  server   through HTTP against a running Quiver or any Qdrant-compatible URL: the hot-path loads, or the recall sweep\n'
    + '  ingest   upsert throughput and time to a searchable index\n'
    + '  sparse   in-process: the sparse vector index, pruned top-k vs exact scan, on SPLADE-like data\n'
    + '  multivector  in-process: HNSW over lists of vectors (MaxSim) vs the exact MaxSim scan\n\n'
    + 'Each prints a table, writes a JSON result file and a recall-vs-QPS plot (SVG, and PNG when rsvg-convert or ImageMagick is installed).\n'
    + 'quiver bench <mode> --help lists the options of a mode.',
  options: [],
};

function datasetOptions(values: ParsedOptions, defaults: DataDefaults): Parameters<typeof loadDataset>[0] {
  const distance = values.distance as Distance | undefined;
  const source = String(values.dataset);
  return {
    source,
    queryFile: values['query-file'] as string | undefined,
    queries: optionalInt(values, 'queries'),
    distance,
    size: optionalInt(values, 'size') ?? (source === 'synthetic' ? defaults.syntheticSize : undefined),
    dim: optionalInt(values, 'dim'),
    clusters: optionalInt(values, 'clusters'),
    seed: int(values, 'seed'),
    fashionMnistDir: String(values['fashion-mnist-dir']),
    cacheDir: String(values['cache-dir']),
  };
}

function sweepOptions(values: ParsedOptions, mode: BenchMode): SweepOptions {
  return {
    k: int(values, 'k'),
    engines: mode === 'ingest' ? ['quiver-f32'] : choices(values, 'engines', ENGINES),
    ms: intList(values, 'm'),
    efConstructs: intList(values, 'ef-construct'),
    efs: mode === 'ingest' ? [] : intList(values, 'ef'),
    oversampling: mode === 'ingest' ? 1 : int(values, 'oversampling'),
  };
}

/** Server mode's --loads and the hot-path loads' options; whether the recall sweep runs too. */
function hotPathOptions(values: ParsedOptions, sweep: SweepOptions): HotPathOptions & { sweep: boolean } {
  const chosen = values.loads === undefined
    ? HOT_PATH_LOADS.filter((load) => load !== 'start' || values.url === undefined)
    : choices(values, 'loads', SERVER_LOADS);
  const loads = HOT_PATH_LOADS.filter((load) => chosen.includes(load));
  // Start-up is timed from the spawn: only a Quiver this process starts can be measured.
  if (loads.includes('start') && values.url !== undefined) throw new CommandError('--loads start times a Quiver this bench spawns: leave out --url, or leave start out of --loads');
  if (loads.length > 0 && [sweep.ms, sweep.efConstructs, sweep.efs].some((list) => list.length > 1)) {
    throw new CommandError(`the hot-path loads (${loads.join(', ')}) measure one collection at one hnsw_ef: give --m, --ef-construct and --ef one value each, or --loads sweep`);
  }
  return {
    sweep: chosen.includes('sweep'),
    loads,
    k: sweep.k,
    m: sweep.ms[0],
    efConstruct: sweep.efConstructs[0],
    ef: sweep.efs[0],
    shards: int(values, 'shards'),
    connections: int(values, 'concurrency'),
    seconds: int(values, 'seconds'),
    queryBatch: int(values, 'query-batch'),
    batch: int(values, 'batch'),
    upsertClients: int(values, 'upsert-clients'),
    rate: int(values, 'rate'),
    workers: int(values, 'workers'),
  };
}

function datasetSummary(data: Dataset): BenchResult['dataset'] {
  return { name: data.name, dim: data.dim, distance: data.distance, base: data.base.length / data.dim, queries: data.queries.length / data.dim };
}

/** Runs `quiver bench ...`; returns the process exit status. */
export async function benchCommand(args: string[]): Promise<number> {
  // Sparse vectors have their own data, measures and result file: a mode of its own.
  if (args[0] === 'sparse') return sparseBenchCommand(args.slice(1));
  const mode = args[0] as BenchMode;
  if (!(mode in BENCH_SPECS)) {
    if (args.length === 0 || args[0] === '--help' || args[0] === '-h') {
      console.log(helpText(BENCH_SPEC));
      return 0;
    }
    throw new CommandError(`unknown bench mode "${args[0]}"; see quiver bench --help`);
  }
  const spec = BENCH_SPECS[mode];
  const values = parseOptions(spec, args.slice(1));
  if (values.help) {
    console.log(helpText(spec));
    return 0;
  }
  const progress = terminalProgress(process.stderr, values.quiet === true);
  if (mode === 'multivector') return multivectorCommand(args, values, progress);
  const sweep = sweepOptions(values, mode);
  // Engine mode's own options, checked before the data set is loaded so a typo fails at once.
  const engine = mode === 'engine'
    ? { repeats: int(values, 'repeats'), exactQueries: int(values, 'exact-queries'), datatypes: choices(values, 'datatype', DATATYPES), clock: choice(values, 'clock', CLOCKS), pqCompressions: choices(values, 'pq-compression', COMPRESSIONS), turboBits: choices(values, 'turbo-bits', TURBO_BITS), originals: choices(values, 'originals', ORIGINALS) }
    : null;
  const hotPath = mode === 'server' ? hotPathOptions(values, sweep) : null;
  const data = await loadDataset(datasetOptions(values, mode === 'server' ? SERVER_DATA_DEFAULTS : DATA_DEFAULTS), progress);
  if (sweep.k > data.base.length / data.dim) throw new CommandError(`--k ${sweep.k} exceeds the ${data.base.length / data.dim} base vectors`);
  const truth = await groundTruth(data, sweep.k, String(values['cache-dir']), progress);
  const startedAt = new Date().toISOString();
  const cpu = cpus();
  const result: BenchResult = {
    mode,
    command: ['quiver', 'bench', ...args].join(' '),
    startedAt,
    machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpu.length, cpuModel: cpu[0]?.model ?? 'unknown' },
    target: 'this process',
    concurrency: null,
    dataset: datasetSummary(data),
    k: sweep.k,
    groundTruth: { file: truth.file, k: truth.k },
    series: [],
    ingest: [],
  };
  if (engine) {
    result.clock = engine.clock;
    result.series = await engineMode(data, truth, { ...sweep, ...engine }, progress);
  } else {
    const concurrency = int(values, 'concurrency');
    const http = await openTarget((values.url as string | undefined) ?? null, concurrency, int(values, 'workers'), values['api-key'] as string | undefined);
    result.target = values.url ? http.url : `a Quiver server started on ${http.url}`;
    result.concurrency = concurrency;
    try {
      const options = { ...sweep, concurrency, batchSizes: intList(values, 'batch'), waits: mode === 'ingest' ? choices(values, 'wait', ['false', 'true'] as const).map((w) => w === 'true') : [false] };
      if (mode === 'server') {
        if (hotPath!.sweep) result.series = await serverMode(http, data, truth, options, progress);
        if (hotPath!.loads.length > 0) result.hotPath = await hotPathMode(http, data, truth, hotPath!, progress);
      } else result.ingest = await ingestMode(http, data, truth, options, progress);
    } finally {
      await http.close();
    }
  }
  return report(result, values);
}

/** Prints the table and the ratios, writes the JSON result and the plot. */
async function report(result: BenchResult, values: ParsedOptions): Promise<number> {
  console.log(`\n${heading(result)}\n`);
  if (result.series.length > 0 || !result.hotPath) console.log(resultTable(result));
  if (result.hotPath) console.log(`${result.series.length > 0 ? '\n' : ''}${hotPathTable(result.hotPath)}\n\n${hotPathLines(result.hotPath, result.k).join('\n')}`);
  if (result.mode === 'engine' && result.series.some((s) => s.m !== null)) console.log(`\nrecall@${result.k} targets (QPS interpolated on each sweep, ratios to ${PEER} with the same m and ef_construct):\n\n${targetsTable(result)}`);
  const ratios = comparisons(result);
  if (ratios.length > 0) console.log(`\n${ratios.join('\n')}`);
  const files = await writeResult(result, String(values.out));
  console.log(`\nresults: ${files.json}${files.svg ? `\nplot:    ${files.svg}` : ''}${files.png ? `\n         ${files.png}` : ''}`);
  return 0;
}

async function multivectorCommand(args: string[], values: ParsedOptions, progress: ReturnType<typeof terminalProgress>): Promise<number> {
  const distance = String(values.distance) as Distance;
  if (!DISTANCES.includes(distance)) throw new CommandError(`--distance: unknown distance "${distance}" (one of ${DISTANCES.join(', ')})`);
  const maxK = int(values, 'vectors');
  const minK = optionalInt(values, 'min-vectors') ?? maxK;
  if (minK > maxK) throw new CommandError(`--min-vectors ${minK} exceeds --vectors ${maxK}`);
  const options = {
    points: int(values, 'size'), dim: int(values, 'dim'), minK, maxK, queries: int(values, 'queries'), queryK: int(values, 'query-vectors'),
    topics: int(values, 'topics'), seed: int(values, 'seed'), distance, k: int(values, 'k'), m: int(values, 'm'),
    efConstruct: int(values, 'ef-construct'), efs: intList(values, 'ef'), repeats: int(values, 'repeats'), exactQueries: int(values, 'exact-queries'),
    int8: values.int8 === true, oversampling: int(values, 'oversampling'), cold: values.cold === true,
  };
  const startedAt = new Date().toISOString();
  const run = await multivectorMode(options, progress);
  const cpu = cpus();
  const name = `synthetic-multivector-${options.points}x${minK === maxK ? maxK : `${minK}-${maxK}`}x${options.dim}-${distance.toLowerCase()}`;
  return report({
    mode: 'multivector',
    command: ['quiver', 'bench', ...args].join(' '),
    startedAt,
    machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpu.length, cpuModel: cpu[0]?.model ?? 'unknown' },
    target: 'this process',
    concurrency: null,
    dataset: { name, dim: options.dim, distance, base: options.points, queries: options.queries },
    k: options.k,
    groundTruth: { file: 'exact MaxSim scan in this run', k: options.k },
    series: run.series,
    ingest: [],
    multivector: { vectors: run.base.counts.reduce((a, b) => a + b, 0), minK, maxK, queryK: options.queryK },
  }, values);
}
