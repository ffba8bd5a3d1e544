// The hot search answers (query, query batch, search, search batch) are printed by compiled
// serialisers (src/server/answer-serializers.ts); each must print exactly the text printJson
// prints for the same answer, for every value: bigint ids and payload integers, NaN and infinite
// scores (which the compiled serialiser refuses, so printJson prints the whole answer), every
// vector form, shard keys, order values and usage.

import fc from 'fast-check';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import t from 'tap';
import type { SchemaObject } from 'ajv';
import { printJson } from '../src/json/print.js';
import { QUERY_ANSWER, QUERY_BATCH_ANSWER, SEARCH_ANSWER, SEARCH_BATCH_ANSWER } from '../src/server/answer-serializers.js';
import { markStart, okCompiled, printReply } from '../src/server/reply.js';

/** A server whose one route answers `result` through `schema`'s compiled serialiser; gives the text sent and the answer object. */
async function printed(schema: SchemaObject, result: unknown, usage?: unknown): Promise<{ sent: string; expected: string }> {
  const app = Fastify();
  app.setReplySerializer(printReply);
  let answer: unknown;
  app.post('/', async (request: FastifyRequest, reply: FastifyReply) => {
    markStart(request);
    const body = okCompiled(request, reply, schema, result);
    answer = usage === undefined ? body : Object.assign(body, { usage });
    return answer;
  });
  const response = await app.inject({ method: 'POST', url: '/', payload: {} });
  await app.close();
  return { sent: response.body, expected: printJson(answer) };
}

const f32 = fc.float({ noDefaultInfinity: false });
const id = fc.oneof(fc.nat(), fc.uuid(), fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n }));
const payload = fc.dictionary(fc.string(), fc.oneof(fc.jsonValue(), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), { maxKeys: 4 });
const vector = fc.oneof(
  fc.array(f32, { maxLength: 4 }),
  fc.array(fc.array(f32, { minLength: 1, maxLength: 3 }), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.oneof(fc.array(f32, { maxLength: 3 }), fc.record({ indices: fc.array(fc.nat()), values: fc.array(f32) }))),
);
const scored = fc.record({
  id,
  version: fc.nat(),
  score: f32,
  payload,
  vector,
  shard_key: fc.oneof(fc.string(), fc.nat()),
  order_value: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
}, { requiredKeys: ['id', 'version', 'score'] });
const points = fc.array(scored, { maxLength: 5 });
const usage = fc.option(fc.record({ hardware: fc.record({ cpu: fc.nat() }), inference: fc.constant(null) }), { nil: undefined });

const ANSWERS: [string, SchemaObject, fc.Arbitrary<unknown>][] = [
  ['query', QUERY_ANSWER, points.map((p) => ({ points: p }))],
  ['query batch', QUERY_BATCH_ANSWER, fc.array(points.map((p) => ({ points: p })), { maxLength: 3 })],
  ['search', SEARCH_ANSWER, points],
  ['search batch', SEARCH_BATCH_ANSWER, fc.array(points, { maxLength: 3 })],
];

for (const [name, schema, result] of ANSWERS) {
  t.test(`${name} answers print as printJson prints them`, async (t) => {
    await fc.assert(fc.asyncProperty(result, usage, async (r, u) => {
      const { sent, expected } = await printed(schema, r, u);
      return sent === expected;
    }), { numRuns: 150 });
    t.pass('every generated answer printed alike');
  });
}

t.test('the usual answer, and the values the compiled serialiser refuses', async (t) => {
  const plain = [{ id: 7, version: 3, score: 0.75 }, { id: 'a6bbc2f4-0000-4000-8000-000000000000', version: 1, score: -1e-45 }];
  for (const points of [plain, [{ id: 2n ** 64n - 1n, version: 1, score: 0.5 }], [{ id: 1, version: 1, score: Number.NaN }], [{ id: 1, version: 1, score: Infinity }]]) {
    const { sent, expected } = await printed(QUERY_ANSWER, { points });
    t.equal(sent, expected, printJson(points));
  }
  const { sent } = await printed(QUERY_ANSWER, { points: [{ id: 2n ** 64n - 1n, version: 1, score: 0.5 }] });
  t.match(sent, /"id":18446744073709551615,/, 'a bigint id as a bare integer');
  // The compiled serialiser does print the answers it takes: one compiled from a schema that
  // leaves `version` out prints none.
  const partial = { type: 'object', properties: { result: { type: 'object', properties: { points: { type: 'array', items: { type: 'object', properties: { id: {}, score: { type: 'number' } } } } } } } };
  t.equal((await printed(partial, { points: plain })).sent, '{"result":{"points":[{"id":7,"score":0.75},{"id":"a6bbc2f4-0000-4000-8000-000000000000","score":-1e-45}]}}');
});
