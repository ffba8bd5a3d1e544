// SVG to PNG with whichever converter is installed (librsvg's rsvg-convert, or ImageMagick);
// none present means no PNG, which is not an error.

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

const CONVERTERS: ((svg: string, png: string) => [string, string[]])[] = [
  (svg, png) => ['rsvg-convert', ['--background-color', 'white', '-o', png, svg]],
  (svg, png) => ['magick', [svg, png]],
  (svg, png) => ['convert', [svg, png]],
];

const PNG_MAGIC = '\x89PNG';

/** Writes `png` from `svg`; returns the converter used, or null when none could. */
export async function svgToPng(svg: string, png: string): Promise<string | null> {
  for (const converter of CONVERTERS) {
    const [command, args] = converter(svg, png);
    const ok = await new Promise<boolean>((resolve) => execFile(command, args, { timeout: 30_000 }, (err) => resolve(!err)));
    if (ok && (await readFile(png).then((b) => b.toString('latin1', 0, 4) === PNG_MAGIC, () => false))) return command;
  }
  return null;
}
