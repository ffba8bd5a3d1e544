// CPU ticks per thread of a process, from /proc: the drivers here read them before and after a
// load to charge each thread's CPU to the requests it served.
import { readdir, readFile } from 'node:fs/promises';

/** utime + stime in clock ticks (1/100 s), keyed by "tid name", for every thread of `pid`. */
export async function threadTicks(pid: number): Promise<Record<string, number>> {
  const ticks: Record<string, number> = {};
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks[`${tid} ${name}`] = Number(f[11]) + Number(f[12]);
  }
  return ticks;
}

/** Each thread's share of a core between two readings `seconds` apart (threads under 0.5% left out). */
export function threadShares(before: Record<string, number>, after: Record<string, number>, seconds: number): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, (v - (before[k] ?? 0)) / 100 / seconds]).filter(([, v]) => (v as number) > 0.005));
}
