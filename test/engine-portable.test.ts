// The engine wrapper must run in a browser unchanged: no Node built-ins and no Node globals.

import t from 'tap';
import { readdir, readFile } from 'node:fs/promises';

t.test('src/engine imports nothing Node-only', async (t) => {
  const dir = new URL('../src/engine/', import.meta.url);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.ts'));
  t.ok(files.length >= 5, 'engine modules found');
  for (const file of files) {
    const text = await readFile(new URL(file, dir), 'utf8');
    const imports = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
    t.same(imports.filter((i) => !i.startsWith('./')), [], `${file} imports only sibling modules`);
    t.notMatch(text, /\b(process|Buffer|require|__dirname)\b/, `${file} uses no Node globals`);
  }
});
