// `quiver <command>`: the command-line entry (src/cli/quiver.js registers tsx, then loads this).

import { CommandError } from '../errors.js';
import { benchCommand } from './bench-command.js';
import { demoCommand } from '../demo/serve.js';

const HELP = `Usage: quiver <command> [options]

Commands:
  bench   compare Quiver with hnswlib-node and an exact scan (engine), load a server over HTTP (server),
          measure upsert throughput (ingest); quiver bench --help
  demo    serve the browser demo (the engine in a Web Worker on Fashion-MNIST); quiver demo --help

quiver <command> --help shows a command's options.`;

async function run(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case 'bench':
      return benchCommand(rest);
    case 'demo':
      return demoCommand(rest);
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      console.log(HELP);
      return 0;
    default:
      throw new CommandError(`unknown command "${command}"; see quiver --help`);
  }
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof CommandError)) throw err;
  console.error(`\nquiver: error: ${err.message}`);
  process.exitCode = 2;
}
