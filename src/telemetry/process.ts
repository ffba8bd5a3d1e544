// What telemetry reports about the process and its machine. Qdrant's memory figures come from
// jemalloc; Quiver reports their nearest V8 and kernel equivalents.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, endianness } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { availableMemoryBytes, diskSpace } from '../quota/meter.js';

export interface MemoryTelemetry {
  active_bytes: number;
  allocated_bytes: number;
  metadata_bytes: number;
  resident_bytes: number;
  retained_bytes: number;
}

/** A field of /proc/self/status in bytes ("VmSize:  123 kB"), or null off Linux. */
function procStatusBytes(field: string): number | null {
  try {
    const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.split(/\s+/)[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export function memoryTelemetry(): MemoryTelemetry {
  const usage = process.memoryUsage();
  return {
    // Bytes in use by JS objects and the buffers they hold.
    allocated_bytes: usage.heapUsed + usage.external,
    // Heap pages reserved for them.
    active_bytes: usage.heapTotal + usage.external,
    // Memory V8 allocates for its own bookkeeping.
    metadata_bytes: getHeapStatistics().malloced_memory,
    resident_bytes: usage.rss,
    // The whole virtual address space mapped by the process.
    retained_bytes: procStatusBytes('VmSize') ?? usage.rss,
  };
}

/** CPU features Qdrant lists (those its SIMD kernels can use), as far as /proc/cpuinfo tells. */
const CPU_FLAGS = ['sse', 'sse2', 'avx', 'avx2', 'fma', 'f16c', 'avx512f', 'neon'];

function cpuFlags(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => /^(flags|Features)\s*:/.test(l)) ?? '';
    const present = new Set(line.split(':')[1]?.trim().split(/\s+/) ?? []);
    return CPU_FLAGS.filter((f) => present.has(f)).join(',');
  } catch {
    return '';
  }
}

function osRelease(): Record<string, string> {
  try {
    return Object.fromEntries(readFileSync('/etc/os-release', 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => {
      const [key, ...rest] = l.split('=');
      return [key, rest.join('=').replace(/^"|"$/g, '')];
    }));
  } catch {
    return {};
  }
}

export function runningEnvironment(storagePath: string, cpu: CpuSampler) {
  const release = osRelease();
  const disk = diskSpace(storagePath);
  return {
    distribution: release.ID ?? null,
    distribution_version: release.VERSION_ID ?? null,
    is_docker: existsSync('/.dockerenv'),
    cores: availableParallelism(),
    cpu_cores_used: cpu.coresUsed(),
    ram_size: Math.floor(availableMemoryBytes() / 1024),
    disk_size: disk ? Math.floor(disk.totalBytes / 1024) : null,
    cpu_flags: cpuFlags(),
    cpu_endian: endianness() === 'LE' ? 'little' : 'big',
  };
}

/** One reading of the process's CPU time (every thread, shard workers included) against the clock. */
interface CpuSample {
  wallMicros: number;
  cpuMicros: number;
}

const CPU_SAMPLE_MS = 1000;
/** Samples kept: the window spans the last two intervals. */
const CPU_WINDOW = 3;

/**
 * Qdrant's `cpu_cores_used`: the average number of cores the process kept busy over roughly the
 * last two seconds, from CPU time sampled every second; null until two samples exist.
 */
export class CpuSampler {
  private readonly samples: CpuSample[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.sample();
    this.timer = setInterval(() => this.sample(), CPU_SAMPLE_MS).unref();
  }

  private sample(): void {
    const { user, system } = process.cpuUsage();
    this.samples.push({ wallMicros: performance.now() * 1000, cpuMicros: user + system });
    if (this.samples.length > CPU_WINDOW) this.samples.shift();
  }

  coresUsed(): number | null {
    if (this.samples.length < 2) return null;
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    return (last.cpuMicros - first.cpuMicros) / (last.wallMicros - first.wallMicros);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** What Qdrant's metrics read of the process from /proc (Linux). */
export interface ProcessFigures {
  threads: number;
  openMmaps: number;
  systemMaxMmaps: number;
  openFds: number;
  /** The lower of the soft and hard limits, either one when the other is unlimited. */
  maxFds: number;
  minorFaults: number;
  majorFaults: number;
  childMinorFaults: number;
  childMajorFaults: number;
}

/** A "Max open files" limit of /proc/self/limits: 0 when unlimited, as Qdrant reads it. */
function limitValue(text: string): number {
  return text === 'unlimited' ? 0 : Number(text);
}

/** The process figures, or null off Linux or when /proc cannot be read. */
export function processFigures(): ProcessFigures | null {
  try {
    // /proc/self/stat: fields after the command name (which may hold spaces), counted from 3.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const field = (n: number): number => Number(fields[n - 3]);
    const limits = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'))?.slice('Max open files'.length).trim().split(/\s+/) ?? [];
    const [soft, hard] = [limitValue(limits[0]), limitValue(limits[1])];
    return {
      threads: readdirSync('/proc/self/task').length,
      openMmaps: readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.length > 0).length,
      systemMaxMmaps: Number(readFileSync('/proc/sys/vm/max_map_count', 'utf8').trim()),
      openFds: readdirSync('/proc/self/fd').length,
      maxFds: soft === 0 ? hard : hard === 0 ? soft : Math.min(soft, hard),
      minorFaults: field(10),
      childMinorFaults: field(11),
      majorFaults: field(12),
      childMajorFaults: field(13),
    };
  } catch {
    return null;
  }
}
