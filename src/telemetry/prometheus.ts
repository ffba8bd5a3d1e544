// Prometheus text exposition format (version 0.0.4): metric families with HELP and TYPE lines,
// label values escaped, histograms as cumulative _bucket series plus _sum and _count.

export type Labels = Record<string, string>;

export interface Sample {
  labels: Labels;
  value: number;
}

export interface HistogramSample {
  labels: Labels;
  /** Upper bounds and cumulative counts, in increasing order of bound. */
  buckets: [bound: number, count: number][];
  sum: number;
  count: number;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length ? `{${pairs.join(',')}}` : '';
}

function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

export class MetricsText {
  private text = '';

  private header(name: string, help: string, type: string): void {
    this.text += `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`;
  }

  /** A gauge or counter family; one with no samples is left out, as Qdrant leaves it out. */
  family(name: string, help: string, type: 'gauge' | 'counter', samples: Sample[]): this {
    if (samples.length === 0) return this;
    this.header(name, help, type);
    for (const s of samples) this.text += `${name}${labelText(s.labels)} ${number(s.value)}\n`;
    return this;
  }

  histogram(name: string, help: string, samples: HistogramSample[]): this {
    if (samples.length === 0) return this;
    this.header(name, help, 'histogram');
    for (const s of samples) {
      for (const [bound, count] of s.buckets) this.text += `${name}_bucket${labelText({ ...s.labels, le: number(bound) })} ${count}\n`;
      this.text += `${name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}\n`;
      this.text += `${name}_sum${labelText(s.labels)} ${number(s.sum)}\n`;
      this.text += `${name}_count${labelText(s.labels)} ${s.count}\n`;
    }
    return this;
  }

  toString(): string {
    return this.text;
  }
}
