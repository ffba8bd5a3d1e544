// Qdrant's wording and status codes for the errors other layers report.

import t from 'tap';
import { formatError, invalidJsonPath, validationError } from '../src/api/messages.js';
import { aliasNotFound, collectionAlreadyExists, collectionNameIsAlias, collectionNotFound, defaultVectorNotFound, exampleVectorNotFound, fallbackShardKeysNotFound, missingIndexForFacet, missingRangeIndexForOrderBy, pointNotFound, shardNotFound, snapshotNotFound, validationFailed, vectorDimensionMismatch, vectorNameNotFound, vectorParamsNotInConfig } from '../src/messages.js';
import type { QuiverError } from '../src/errors.js';

function shape(err: QuiverError): [string, number, string] {
  return [err.kind, err.statusCode, err.message];
}

t.test('request errors', async (t) => {
  t.same(shape(formatError('missing field `ids`')), ['FormatError', 400, 'Format error in JSON body: missing field `ids`']);
  t.same(shape(formatError('invalid digit found in string', 'query parameters')), [
    'FormatError',
    400,
    'Deserialize error in query parameters: invalid digit found in string',
  ]);
  t.same(
    shape(validationError([{ path: 'limit', message: 'value 0 invalid, must be 1 or larger' }, { path: 'a.b', message: 'x' }])),
    ['ValidationError', 422, 'Validation error in JSON body: [limit: value 0 invalid, must be 1 or larger; a.b: x]'],
  );
  t.same(shape(invalidJsonPath('a..b', 'path parameters')), ['FormatError', 400, "Deserialize error in path parameters: Invalid json path: 'a..b'"]);
});

t.test('CollectionError::NotFound appends " not found" to what is missing', async (t) => {
  t.same(shape(shardNotFound(7)), ['NotFound', 404, 'Not found: shard 7 not found']);
  t.same(shape(snapshotNotFound('a.snapshot')), ['NotFound', 404, 'Not found: Snapshot a.snapshot not found']);
  t.same(shape(fallbackShardKeysNotFound('a', 2)), ['NotFound', 404, 'Not found: Neither target shard key a nor fallback shard key 2 exist not found']);
  t.same(shape(exampleVectorNotFound('image')), ['NotFound', 404, 'Not found: Vector with name "image" for point not found']);
});

t.test("segment's validation errors are bad input", async (t) => {
  t.same(shape(validationFailed("Can't average vectors with different types")), ['BadInput', 400, "Wrong input: Validation failed: Can't average vectors with different types"]);
});

t.test('collection, alias and point errors', async (t) => {
  t.same(shape(collectionNotFound('books')), ['NotFound', 404, "Not found: Collection `books` doesn't exist!"]);
  t.same(shape(collectionAlreadyExists('books')), ['AlreadyExists', 409, 'Wrong input: Collection `books` already exists!']);
  t.same(shape(collectionNameIsAlias('latest')), [
    'BadInput',
    400,
    "Wrong input: Can't create collection with name latest. Alias with the same name already exists",
  ]);
  t.same(shape(aliasNotFound('latest')), ['NotFound', 404, 'Not found: Alias latest does not exists!']);
  t.same(shape(pointNotFound(999)), ['NotFound', 404, 'Not found: No point with id 999 found']);
  t.same(shape(pointNotFound('0a38d572-4f1e-4a76-9c47-7a3c7b5a1f00')), [
    'NotFound',
    404,
    'Not found: No point with id 0a38d572-4f1e-4a76-9c47-7a3c7b5a1f00 found',
  ]);
});

t.test('vector errors', async (t) => {
  t.same(shape(vectorDimensionMismatch(768, 1024)), ['BadInput', 400, 'Wrong input: Vector dimension error: expected dim: 768, got 1024']);
  t.same(shape(vectorNameNotFound('nope')), ['BadInput', 400, 'Wrong input: Not existing vector name error: nope']);
  t.same(shape(defaultVectorNotFound()), ['BadInput', 400, 'Wrong input: Default vector config is not found in collection']);
  t.same(shape(vectorParamsNotInConfig('image')), ['BadInput', 400, 'Wrong input: Vector params for image are not specified in config']);
});

t.test('index errors', async (t) => {
  t.same(shape(missingRangeIndexForOrderBy('price')), [
    'BadInput',
    400,
    'Wrong input: No range index for `order_by` key: `price`. Please create one to use `order_by`. ' +
      'Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Range conditions',
  ]);
  t.same(shape(missingIndexForFacet('city')), [
    'BadInput',
    400,
    'Wrong input: No appropriate index for faceting: `city`. Please create one to facet on this field. ' +
      'Check https://qdrant.tech/documentation/concepts/indexing/#payload-index to see which payload schemas support Match conditions',
  ]);
});
