// Progress of long steps on stderr: a redrawn bar on a terminal; on a pipe or a log file, one
// line when a step starts and one when it ends, so logs stay readable.

import type { Progress, ProgressTask } from '../bench/progress.js';

const BAR = 30;
const REDRAW_MS = 100;

export function terminalProgress(stream: NodeJS.WriteStream, quiet: boolean): Progress {
  const tty = stream.isTTY === true;
  const write = (text: string) => {
    if (!quiet) stream.write(text);
  };
  return {
    note: (line) => write(`${line}\n`),
    start(label: string, total: number): ProgressTask {
      const started = performance.now();
      let count = 0;
      let drawn = 0;
      const elapsed = () => ((performance.now() - started) / 1000).toFixed(1);
      const draw = () => {
        const share = total > 0 ? Math.min(1, count / total) : 1;
        const filled = Math.round(share * BAR);
        write(`\r\x1b[2K${label} [${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${(share * 100).toFixed(0).padStart(3)}% ${count}/${total} ${elapsed()} s`);
      };
      if (tty) draw();
      else write(`${label} ...\n`);
      return {
        tick(n = 1) {
          count += n;
          if (tty && performance.now() - drawn > REDRAW_MS) {
            drawn = performance.now();
            draw();
          }
        },
        done() {
          count = total;
          if (tty) {
            draw();
            write('\n');
          } else write(`${label}: done in ${elapsed()} s\n`);
        },
      };
    },
  };
}
