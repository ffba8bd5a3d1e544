// Recall vs queries-per-second plot as SVG, drawn the way ann-benchmarks draws them: recall on
// x, QPS on a log y axis, each series reduced to its Pareto frontier (no point shown that
// another point of the series beats on both axes), up and to the right is better.

import { RECALL_TARGETS } from '../bench/recall.js';
import type { Series } from '../bench/result.js';
import type { SweepPoint } from '../bench/sweep.js';

const WIDTH = 820;
const HEIGHT = 560;
const PAD = { left: 80, right: 200, top: 50, bottom: 60 };
const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const MARKERS = ['circle', 'square', 'triangle', 'diamond'] as const;

export function seriesLabel(s: Series, all: Series[]): string {
  const configs = new Set(all.filter((o) => o.m !== null).map((o) => `${o.m}/${o.efConstruct}`));
  return s.m !== null && configs.size > 1 ? `${s.engine} (m=${s.m}, efc=${s.efConstruct})` : s.engine;
}

export function paretoFrontier(points: readonly SweepPoint[]): SweepPoint[] {
  const byRecall = [...points].sort((a, b) => b.recall - a.recall || b.qps - a.qps);
  const out: SweepPoint[] = [];
  for (const p of byRecall) if (out.length === 0 || p.qps > out[out.length - 1].qps) out.push(p);
  return out.reverse();
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
}

function marker(kind: (typeof MARKERS)[number], x: number, y: number, colour: string): string {
  const r = 4.5;
  switch (kind) {
    case 'circle':
      return `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${r}" fill="${colour}"/>`;
    case 'square':
      return `<rect x="${(x - r).toFixed(1)}" y="${(y - r).toFixed(1)}" width="${2 * r}" height="${2 * r}" fill="${colour}"/>`;
    case 'triangle':
      return `<polygon points="${x.toFixed(1)},${(y - r - 1).toFixed(1)} ${(x - r - 1).toFixed(1)},${(y + r).toFixed(1)} ${(x + r + 1).toFixed(1)},${(y + r).toFixed(1)}" fill="${colour}"/>`;
    case 'diamond':
      return `<polygon points="${x.toFixed(1)},${(y - r - 1).toFixed(1)} ${(x - r - 1).toFixed(1)},${y.toFixed(1)} ${x.toFixed(1)},${(y + r + 1).toFixed(1)} ${(x + r + 1).toFixed(1)},${y.toFixed(1)}" fill="${colour}"/>`;
  }
}

export function recallQpsSvg(title: string, k: number, series: Series[]): string {
  const fronts = series.map((s) => ({ label: seriesLabel(s, series), points: paretoFrontier(s.points) }));
  const all = fronts.flatMap((f) => f.points);
  const minRecall = Math.max(0, Math.floor(Math.min(...all.map((p) => p.recall)) * 20) / 20);
  const xMin = minRecall >= 1 ? 0.95 : minRecall;
  const yMin = Math.floor(Math.log10(Math.min(...all.map((p) => p.qps))));
  const yMax = Math.ceil(Math.log10(Math.max(...all.map((p) => p.qps))) + (Math.max(...all.map((p) => p.qps)) === 10 ** yMin ? 1 : 0));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (recall: number) => PAD.left + ((recall - xMin) / (1 - xMin)) * plotW;
  const y = (qps: number) => PAD.top + plotH - ((Math.log10(qps) - yMin) / Math.max(yMax - yMin, 1)) * plotH;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="13">`);
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`);
  out.push(`<text x="${PAD.left + plotW / 2}" y="28" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(title)}</text>`);
  // Grid and ticks on x: steps of 0.1, 0.05 or 0.01 of recall by the range shown; on y, decades and their 2x/5x.
  const xStep = 1 - xMin <= 0.1 ? 0.01 : 1 - xMin <= 0.3 ? 0.05 : 0.1;
  for (let r = Math.ceil(xMin / xStep) * xStep; r <= 1 + 1e-9; r += xStep) {
    out.push(`<line x1="${x(r).toFixed(1)}" y1="${PAD.top}" x2="${x(r).toFixed(1)}" y2="${PAD.top + plotH}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${x(r).toFixed(1)}" y="${PAD.top + plotH + 18}" text-anchor="middle">${r.toFixed(2)}</text>`);
  }
  for (let d = yMin; d <= yMax; d++) {
    for (const f of d < yMax ? [1, 2, 5] : [1]) {
      const v = f * 10 ** d;
      out.push(`<line x1="${PAD.left}" y1="${y(v).toFixed(1)}" x2="${PAD.left + plotW}" y2="${y(v).toFixed(1)}" stroke="${f === 1 ? '#d0d0d0' : '#eeeeee'}"/>`);
      out.push(`<text x="${PAD.left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v >= 1 ? v.toLocaleString('en-US') : v}</text>`);
    }
  }
  // The recall targets engines are compared at (the targets table), as dashed guides.
  for (const r of RECALL_TARGETS.filter((t) => t > xMin)) {
    out.push(`<line x1="${x(r).toFixed(1)}" y1="${PAD.top}" x2="${x(r).toFixed(1)}" y2="${PAD.top + plotH}" stroke="#999" stroke-dasharray="4 4"/>`);
  }
  out.push(`<rect x="${PAD.left}" y="${PAD.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${PAD.left + plotW / 2}" y="${HEIGHT - 18}" text-anchor="middle">Recall@${k}</text>`);
  out.push(`<text transform="translate(22 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle">Queries per second (1/s)</text>`);
  fronts.forEach((f, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const kind = MARKERS[i % MARKERS.length];
    if (f.points.length > 1) out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${f.points.map((p) => `${x(p.recall).toFixed(1)},${y(p.qps).toFixed(1)}`).join(' ')}"/>`);
    for (const p of f.points) out.push(marker(kind, x(p.recall), y(p.qps), colour));
    const ly = PAD.top + 12 + i * 22;
    out.push(`<line x1="${PAD.left + plotW + 12}" y1="${ly}" x2="${PAD.left + plotW + 32}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`);
    out.push(marker(kind, PAD.left + plotW + 22, ly, colour));
    out.push(`<text x="${PAD.left + plotW + 40}" y="${ly + 4}">${escapeXml(f.label)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
