// The HTTP floor of the server bench, run in a process of its own: Fastify as Quiver builds on it
// (JSON body parsed, one route), answering every query with the same Qdrant-shaped answer of ten
// hits, no validation, no engine. What it serves under the bench's generator is the most any
// server built this way could serve on the machine, with the generator sharing its cores.
// Usage: node --import tsx src/bench/http-floor-server.ts PORT

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
await app.listen({ port, host: '127.0.0.1' });
