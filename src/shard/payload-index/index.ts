// Payload indexes: createPayloadIndex(key, schema) builds the index a create-index request asks
// for; the filter planner asks indexes to answer conditions (PayloadIndex.select).

import { BoolIndex } from './bool.js';
import { GeoIndex } from './geo.js';
import { IntegerIndex } from './integer.js';
import { KeywordIndex } from './keyword.js';
import { datetimeIndex, floatIndex } from './numeric.js';
import { indexParams, type IndexSchema } from './schema.js';
import { FullTextIndex } from './text.js';
import type { PayloadIndex } from './types.js';
import { UuidIndex } from './uuid.js';

export function createPayloadIndex(key: string, schema: IndexSchema): PayloadIndex {
  const params = indexParams(schema);
  switch (params.type) {
    case 'keyword':
      return new KeywordIndex(key, params);
    case 'integer':
      return new IntegerIndex(key, params);
    case 'float':
      return floatIndex(key, params);
    case 'datetime':
      return datetimeIndex(key, params);
    case 'bool':
      return new BoolIndex(key, params);
    case 'geo':
      return new GeoIndex(key, params);
    case 'text':
      return new FullTextIndex(key, params);
    case 'uuid':
      return new UuidIndex(key, params);
  }
}

export type * from './schema.js';
export { indexParams } from './schema.js';
export * from './types.js';
