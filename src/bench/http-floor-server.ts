// The HTTP floor of the server bench, run in a process of its own: Fastify as Quiver builds on it
// (JSON body parsed, one route), answering every query with the same Qdrant-shaped answer of ten
// hits, no validation, no engine. What it serves under the bench's generator is the most any
// server built this way could serve on the machine, with the generator sharing its cores.
// Usage: node --import tsx src/bench/http-floor-server.ts PORT (GET /cpu: its CPU time so far)

import Fastify from 'fastify';

const HITS = 10;
const port = Number(process.argv[2]);
const answer = JSON.stringify({
  result: { points: Array.from({ length: HITS }, (_, i) => ({ id: 1000 + i, version: 1, score: 0.9 - i / 100 })) },
  status: 'ok',
  time: 0.0001,
});

const app = Fastify({ logger: false });
app.post('/collections/:collection/points/query', async (_request, reply) => {
  reply.type('application/json');
  return answer;
});
// This process's CPU time so far (user + system, microseconds): the bench's floor row reads it
// before and after its window.
app.get('/cpu', async () => {
  const { user, system } = process.cpuUsage();
  return { micros: user + system };
});
await app.listen({ port, host: '127.0.0.1' });
