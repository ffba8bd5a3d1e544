// Aligned text tables for the terminal (and for README): numbers right-aligned, text left.

export interface Column {
  title: string;
  align: 'left' | 'right';
}

export function renderTable(columns: Column[], rows: string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.title.length, ...rows.map((r) => r[i].length)));
  const cell = (text: string, i: number) => (columns[i].align === 'right' ? text.padStart(widths[i]) : text.padEnd(widths[i]));
  const line = (cells: string[]) => cells.map(cell).join('  ').trimEnd();
  return [line(columns.map((c) => c.title)), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
