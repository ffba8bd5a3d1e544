// Readings of the two resources a quota caps: the process's resident memory against the memory
// available to it (the cgroup limit when one applies, else the machine's memory), and the used
// space of the filesystem holding the storage directory.

import { readFileSync, statfsSync } from 'node:fs';
import { totalmem } from 'node:os';

/** `used` as a whole percentage of `total`, rounded down (a limit trips only once fully reached), at most 100. */
export function percentOf(used: number, total: number): number | null {
  if (!(total > 0)) return null;
  return Math.min(100, Math.floor((used * 100) / total));
}

const CGROUP_LIMIT_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];

/** The cgroup memory limit in bytes, if one is set below the machine's memory ("max" or a huge v1 value means none). */
function cgroupLimit(machine: number): number | null {
  for (const file of CGROUP_LIMIT_FILES) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      continue;
    }
    const bytes = Number(text);
    if (Number.isFinite(bytes) && bytes > 0 && bytes < machine) return bytes;
  }
  return null;
}

let available: number | undefined;

/** Memory available to this process in bytes; constant for the life of the process. */
export function availableMemoryBytes(): number {
  available ??= cgroupLimit(totalmem()) ?? totalmem();
  return available;
}

export function residentMemoryPercent(): number | null {
  return percentOf(process.memoryUsage.rss(), availableMemoryBytes());
}

export interface DiskSpace {
  totalBytes: number;
  availableBytes: number;
}

/** Capacity and space available to the process on the filesystem holding `path`; null if it cannot be read. */
export function diskSpace(path: string): DiskSpace | null {
  try {
    const stats = statfsSync(path);
    return { totalBytes: stats.blocks * stats.bsize, availableBytes: stats.bavail * stats.bsize };
  } catch {
    return null;
  }
}

/** Used space counts everything not available to the process, reserved blocks included, as Qdrant does. */
export function diskUsagePercent(path: string): number | null {
  const space = diskSpace(path);
  return space && percentOf(space.totalBytes - space.availableBytes, space.totalBytes);
}
