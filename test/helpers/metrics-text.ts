// Reading /metrics in tests: a strict parser of Prometheus text exposition (every line a HELP,
// TYPE or sample of a declared family, each family declared once, every value numeric) and
// lookups of samples by name and labels.

import type { Test } from 'tap';
import type { RunningServer } from './server.js';

export interface Family {
  type: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

/** Parses Prometheus text exposition strictly: every line a HELP, TYPE or sample of a declared family. */
export function parseMetrics(t: Test, text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  t.ok(text.endsWith('\n'), 'exposition ends with a newline');
  for (const line of text.trimEnd().split('\n')) {
    const help = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$/.exec(line);
    if (help) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter|histogram|summary|untyped)$/.exec(line);
    if (type) {
      t.notOk(families.has(type[1]), `family ${type[1]} declared once`);
      families.set(type[1], { type: type[2], samples: [] });
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) {
      t.fail(`not a valid exposition line: ${line}`);
      continue;
    }
    const labels: Record<string, string> = {};
    for (const [, key, value] of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value;
    const family = [...families.keys()].find((f) => sample[1] === f || (families.get(f)!.type === 'histogram' && /^_(bucket|sum|count)$/.test(sample[1].slice(f.length)) && sample[1].startsWith(f)));
    if (!family) {
      t.fail(`sample of an undeclared family: ${line}`);
      continue;
    }
    const value = sample[3] === '+Inf' ? Infinity : Number(sample[3]);
    t.notOk(Number.isNaN(value), `numeric value: ${line}`);
    families.get(family)!.samples.push({ name: sample[1], labels, value });
  }
  return families;
}

export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const samples = [...families.values()].flatMap((f) => f.samples);
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

export async function metrics(t: Test, server: RunningServer, query = ''): Promise<Map<string, Family>> {
  const response = await fetch(`${server.url}/metrics${query}`);
  t.equal(response.status, 200, 'metrics answered');
  t.match(response.headers.get('content-type'), /^text\/plain/, 'metrics are plain text');
  return parseMetrics(t, await response.text());
}

