// Throwaway probe for docs/research/server-profile.md (not part of the product or the tests):
// preloaded into a server's main thread, samples where it allocates, including objects the
// young-generation GC has already freed (what makes scavenges frequent), and writes the profile
// to $ALLOC_PROFILE: the first SIGUSR2 starts it, the second writes it. Summarise it with --top N:
//   node --import ./docs/research/profile-server/alloc-sample.mjs src/cli/start.js   (load, kill -USR2, measured load, kill -USR2)
//   node docs/research/profile-server/alloc-sample.mjs --top 25 PROFILE
import { Session } from 'node:inspector';
import { readFileSync, writeFileSync } from 'node:fs';

if (process.argv[2] === '--top') {
  const top = Number(process.argv[3]);
  const profile = JSON.parse(readFileSync(process.argv[4], 'utf8'));
  const sites = new Map();
  const walk = (node, caller) => {
    const f = node.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1} < ${caller}`;
    if (node.selfSize) sites.set(name, (sites.get(name) ?? 0) + node.selfSize);
    for (const child of node.children ?? []) walk(child, f.functionName || '(anonymous)');
  };
  walk(profile.head, '');
  const total = [...sites.values()].reduce((a, b) => a + b, 0);
  console.log(`sampled ${(total / 2 ** 20).toFixed(1)} MB`);
  for (const [name, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${(100 * bytes / total).toFixed(1).padStart(5)}%  ${name}`);
  }
} else {
  // The first SIGUSR2 starts sampling (once the load of interest runs), the second writes the profile.
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      return;
    }
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (!err) writeFileSync(process.env.ALLOC_PROFILE ?? '/tmp/alloc.heapprofile', JSON.stringify(result.profile));
    });
  });
}
