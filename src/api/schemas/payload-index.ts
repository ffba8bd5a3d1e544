// CreateFieldIndex: a field name and either a bare index type or the parameters of one.

import type { SchemaObject } from 'ajv';
import { bool, jsonPath, opt, seq, str, struct, uint, unitEnum, untagged } from './builders.js';

export const PAYLOAD_SCHEMA_TYPES = ['keyword', 'integer', 'float', 'geo', 'text', 'bool', 'datetime', 'uuid'] as const;

const MEMORY = opt(unitEnum(['cold', 'cached', 'pinned']));

function indexParams(name: string, type: string, fields: Record<string, SchemaObject | boolean>): SchemaObject {
  return struct(
    name,
    { type: unitEnum([type]), ...fields, on_disk: opt(bool()), memory: MEMORY, enable_hnsw: opt(bool()) },
    { required: ['type'] },
  );
}

export const STOPWORD_LANGUAGES = [
  'arabic', 'azerbaijani', 'basque', 'bengali', 'catalan', 'chinese', 'danish', 'dutch', 'english', 'finnish',
  'french', 'german', 'greek', 'hebrew', 'hinglish', 'hungarian', 'indonesian', 'italian', 'japanese', 'kazakh',
  'nepali', 'norwegian', 'portuguese', 'romanian', 'russian', 'slovene', 'spanish', 'swedish', 'tajik', 'turkish',
];
export const SNOWBALL_LANGUAGES = [
  'arabic', 'armenian', 'danish', 'dutch', 'english', 'finnish', 'french', 'german', 'greek', 'hungarian',
  'italian', 'norwegian', 'portuguese', 'romanian', 'russian', 'spanish', 'swedish', 'tamil', 'turkish',
];

const STOPWORDS = untagged('StopwordsInterface', [
  unitEnum(STOPWORD_LANGUAGES),
  struct('StopwordsSet', { languages: opt(seq(unitEnum(STOPWORD_LANGUAGES))), custom: opt(seq(str())) }),
]);

const STEMMER = untagged('StemmingAlgorithm', [
  struct('SnowballParams', { type: unitEnum(['snowball']), language: unitEnum(SNOWBALL_LANGUAGES) }, { required: ['type', 'language'] }),
  struct('DisabledStemmerParams', { type: unitEnum(['none']) }, { required: ['type'] }),
]);

const PAYLOAD_SCHEMA_PARAMS = untagged('PayloadSchemaParams', [
  indexParams('KeywordIndexParams', 'keyword', { is_tenant: opt(bool()), prefix: opt(bool()) }),
  indexParams('IntegerIndexParams', 'integer', { lookup: opt(bool()), range: opt(bool()), is_principal: opt(bool()) }),
  indexParams('FloatIndexParams', 'float', { is_principal: opt(bool()) }),
  indexParams('GeoIndexParams', 'geo', {}),
  indexParams('TextIndexParams', 'text', {
    tokenizer: unitEnum(['prefix', 'whitespace', 'word', 'multilingual']),
    min_token_len: opt(uint('usize')),
    max_token_len: opt(uint('usize')),
    lowercase: opt(bool()),
    ascii_folding: opt(bool()),
    phrase_matching: opt(bool()),
    stopwords: opt(STOPWORDS),
    stemmer: opt(STEMMER),
  }),
  indexParams('BoolIndexParams', 'bool', {}),
  indexParams('DatetimeIndexParams', 'datetime', { is_principal: opt(bool()) }),
  indexParams('UuidIndexParams', 'uuid', { is_tenant: opt(bool()) }),
]);

export const CREATE_FIELD_INDEX = struct(
  'CreateFieldIndex',
  {
    field_name: jsonPath(),
    field_schema: opt(untagged('PayloadFieldSchema', [unitEnum(PAYLOAD_SCHEMA_TYPES), PAYLOAD_SCHEMA_PARAMS])),
  },
  { required: ['field_name'] },
);
