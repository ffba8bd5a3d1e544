// The etcd member a peer supervises: it starts and serves its client port, stops on request,
// and dies with the process that started it even when that process is SIGKILLed.

import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { request } from 'undici';
import { startTestEtcd } from './helpers/etcd-member.js';

/** Whether `pid` is a live process (a zombie waiting for its parent counts as gone). */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('a member serves its client port and stops on request', async (t) => {
  const member = await startTestEtcd(t);
  const answer = await request(`${member.clientUrl}/version`);
  const version = (await answer.body.json()) as { etcdserver: string };
  t.match(version.etcdserver, /^3\./);
  const exit = await member.stop();
  t.equal(exit.signal === 'SIGTERM' || exit.code === 0, true, 'ended by the stop');
  t.equal(member.running, false);
  t.equal(await alive(member.pid), false);
});

t.test('a SIGKILL of the process that started a member takes the member with it', async (t) => {
  const script = `
    const { startTestEtcd } = await import(${JSON.stringify(new URL('./helpers/etcd-member.ts', import.meta.url).href)});
    const member = await startTestEtcd({ teardown() {} });
    process.stdout.write(String(member.pid) + '\\n');
    setInterval(() => {}, 1000);
  `;
  const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => parent.kill('SIGKILL'));
  const pid = await new Promise<number>((resolve, reject) => {
    let out = '';
    parent.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    parent.once('exit', () => reject(new Error(`parent exited before the member started: ${out}`)));
  });
  t.equal(await alive(pid), true, 'the member runs');
  parent.kill('SIGKILL');
  await until('the member to die with its parent', async () => !(await alive(pid)));
  t.pass('no etcd left behind');
});
