// Temporary folders a test file makes, removed when the file ends (after its tests' teardowns
// stopped what wrote into them), so a run of the suite leaves none behind in the system's tmpdir.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

const made: string[] = [];

/** A fresh folder named `prefix` + random characters in the system's tmpdir. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  // A folder a still-running process writes into may not go at once: what is left is no failure of the tests.
  if (made.length === 0) t.teardown(() => Promise.all(made.map((d) => rm(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }).catch(() => undefined))).then(() => undefined));
  made.push(dir);
  return dir;
}
