// The git commit of the running build, for `GET /`: `GIT_COMMIT_ID` when the build environment
// sets it (Qdrant's build variable), else read once from the checkout's .git (a worktree's .git
// file is followed, refs are looked up loose then packed). When neither says, there is none, and
// `commit` is left out as Qdrant leaves it out of a build without one.

import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const COMMIT_ID = /^[0-9a-f]{40}$/;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The git directory of the checkout at `root`: `.git` itself, or where a worktree's `.git` file points. */
function gitDirOf(root: string): string | null {
  const dotGit = join(root, '.git');
  try {
    if (statSync(dotGit).isDirectory()) return dotGit;
  } catch {
    return null;
  }
  const pointer = read(dotGit)?.match(/^gitdir:\s*(.+)$/m);
  return pointer ? resolve(root, pointer[1]) : null;
}

/** The commit a ref names: its loose file, else its line in packed-refs. */
function resolveRef(commonDir: string, ref: string): string | null {
  const loose = read(join(commonDir, ref));
  if (loose) return loose;
  const packed = read(join(commonDir, 'packed-refs'));
  const line = packed?.split('\n').find((l) => l.endsWith(` ${ref}`));
  return line ? line.split(' ')[0] : null;
}

/** The commit checked out at `root`, or null when it cannot be told. */
export function checkedOutCommit(root: string): string | null {
  const gitDir = gitDirOf(root);
  if (!gitDir) return null;
  const head = read(join(gitDir, 'HEAD'));
  if (!head) return null;
  const ref = head.match(/^ref:\s*(.+)$/);
  // A worktree keeps its own HEAD; its refs live in the repository's common directory.
  const common = read(join(gitDir, 'commondir'));
  const commit = ref ? resolveRef(common ? resolve(gitDir, common) : gitDir, ref[1]) : head;
  return commit && COMMIT_ID.test(commit) ? commit : null;
}

let commit: string | null | undefined;

export function buildCommit(): string | null {
  if (commit === undefined) {
    const fromEnv = process.env.GIT_COMMIT_ID?.trim();
    commit = fromEnv ? fromEnv : checkedOutCommit(ROOT);
  }
  return commit;
}
