// Index schemas as Qdrant's create-index request gives them (field_schema): a type name, or an
// object of parameters with that type. Parameters keep Qdrant's names because collection info
// echoes them back. Options that only place data (on_disk, memory) or tune the graph
// (enable_hnsw, is_tenant, is_principal) change nothing in how Quiver answers filters.

import type { TokenizerType } from '../../text/tokenizer.js';

export type PayloadSchemaType = 'keyword' | 'integer' | 'float' | 'geo' | 'text' | 'bool' | 'datetime' | 'uuid';

type Memory = 'cold' | 'cached' | 'pinned';

interface Placement {
  on_disk?: boolean | null;
  memory?: Memory | null;
  enable_hnsw?: boolean | null;
}

export interface KeywordIndexParams extends Placement {
  type: 'keyword';
  is_tenant?: boolean | null;
  /** Enables match.prefix through the index in Qdrant; Quiver's keyword index always serves it. */
  prefix?: boolean | null;
}

export interface IntegerIndexParams extends Placement {
  type: 'integer';
  /** Serve match conditions (default true); when false they are checked on payloads. */
  lookup?: boolean | null;
  /** Serve range conditions (default true); when false they are checked on payloads. */
  range?: boolean | null;
  is_principal?: boolean | null;
}

export interface FloatIndexParams extends Placement {
  type: 'float';
  is_principal?: boolean | null;
}

export interface GeoIndexParams extends Placement {
  type: 'geo';
}

export type { TokenizerType } from '../../text/tokenizer.js';

export interface TextIndexParams extends Placement {
  type: 'text';
  tokenizer?: TokenizerType;
  min_token_len?: number | null;
  max_token_len?: number | null;
  lowercase?: boolean | null;
  ascii_folding?: boolean | null;
  phrase_matching?: boolean | null;
  /** A language name or {languages, custom}: those words are dropped from tokens (src/text/stopwords.ts). */
  stopwords?: string | { languages?: string[] | null; custom?: string[] | null } | null;
  /** Snowball stemming of every token, or none (src/text/stemmer.ts). */
  stemmer?: { type: 'snowball'; language: string } | { type: 'none' } | null;
}

export interface BoolIndexParams extends Placement {
  type: 'bool';
}

export interface DatetimeIndexParams extends Placement {
  type: 'datetime';
  is_principal?: boolean | null;
}

export interface UuidIndexParams extends Placement {
  type: 'uuid';
  is_tenant?: boolean | null;
}

export type IndexParams =
  | KeywordIndexParams
  | IntegerIndexParams
  | FloatIndexParams
  | GeoIndexParams
  | TextIndexParams
  | BoolIndexParams
  | DatetimeIndexParams
  | UuidIndexParams;

/** Qdrant's PayloadFieldSchema: a bare type name or typed parameters. */
export type IndexSchema = PayloadSchemaType | IndexParams;

export function indexParams(schema: IndexSchema): IndexParams {
  return typeof schema === 'string' ? { type: schema } : schema;
}
