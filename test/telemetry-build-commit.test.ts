// The build commit GET / reports, read from a checkout's .git: a branch's loose ref, a packed
// ref, a detached HEAD, a worktree's .git file pointing into the repository; nothing when there
// is no checkout or HEAD names no commit.

import t from 'tap';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedOutCommit } from '../src/telemetry/build-commit.js';

const A = 'a'.repeat(40);
const B = '0123456789abcdef0123456789abcdef01234567';

const made: string[] = [];
t.teardown(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

async function checkout(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'quiver-commit-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

t.test('a branch: its loose ref, else its packed ref', async (t) => {
  t.equal(checkedOutCommit(await checkout({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': `${A}\n` })), A);
  t.equal(checkedOutCommit(await checkout({ '.git/HEAD': 'ref: refs/heads/main\n', '.git/packed-refs': `# pack-refs with: peeled\n${B} refs/heads/other\n${A} refs/heads/main\n` })), A);
});

t.test('a detached HEAD names its commit', async (t) => {
  t.equal(checkedOutCommit(await checkout({ '.git/HEAD': `${B}\n` })), B);
});

t.test('a worktree: its own HEAD, the refs of the common repository', async (t) => {
  const root = await checkout({
    'repo/.git/refs/heads/feature': `${B}\n`,
    'repo/.git/worktrees/wt/HEAD': 'ref: refs/heads/feature\n',
    'repo/.git/worktrees/wt/commondir': '../..\n',
    'wt/.git': 'gitdir: ../repo/.git/worktrees/wt\n',
  });
  t.equal(checkedOutCommit(join(root, 'wt')), B);
});

t.test('no checkout, an unborn branch or a malformed HEAD: no commit', async (t) => {
  t.equal(checkedOutCommit(await checkout({})), null);
  t.equal(checkedOutCommit(await checkout({ '.git/HEAD': 'ref: refs/heads/unborn\n' })), null);
  t.equal(checkedOutCommit(await checkout({ '.git/HEAD': 'not a commit\n' })), null);
});
