// Raw HTTP for the request fuzzer: the path goes out exactly as written (fetch would resolve dot
// segments and re-encode), the body as given, and every request has a bound on its answer.

import { request as httpRequest } from 'node:http';
import type { Answer } from './fuzz-state.js';

export class NoAnswer extends Error {}

/** Sends one request to 127.0.0.1:`port`; rejects with NoAnswer when no full answer came within `boundMs`. */
export function rawRequest(port: number, method: string, path: string, body: string | undefined, boundMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    const bytes = body === undefined ? undefined : Buffer.from(body, 'utf8');
    if (bytes) headers['content-length'] = bytes.length;
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, timeout: boundMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON (metrics text, a snapshot file): kept as text
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    // Whole-answer bound: the socket timeout alone only notices silence.
    const timer = setTimeout(() => {
      req.destroy();
      reject(new NoAnswer(`no answer within ${boundMs} ms`));
    }, boundMs);
    req.on('timeout', () => req.destroy(new NoAnswer(`no answer within ${boundMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (bytes) req.write(bytes);
    req.end();
  });
}
