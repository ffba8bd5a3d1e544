// Full-text index: token -> points, plus each string's token sequence for phrases. With it,
// text conditions are judged on tokens, as Qdrant's full-text index judges them:
// - text: every query token is among the point's tokens (all its strings together);
// - text_any: some query token is;
// - phrase: the query's tokens appear consecutively within one of the point's strings.
// A query without tokens matches nothing.

import type { Bitset } from '../../engine/bitset.js';
import type { JsonValue } from '../../model.js';
import { isTextMatch, type TextMatch } from '../filter/field-check.js';
import type { Match } from '../filter/types.js';
import { flatten } from '../filter/json-path.js';
import { BaseIndex, bitsetOf, type SoleTest } from './base.js';
import { Postings } from './postings.js';
import type { TextIndexParams } from './schema.js';
import { createTokenizer, type Tokenizer } from './tokenizer.js';
import type { SemanticIndex } from './types.js';

export class FullTextIndex extends BaseIndex implements SemanticIndex {
  private readonly tokenizer: Tokenizer;
  private readonly tokens = new Postings<string>();
  /** Per point, the token sequence of each of its strings. */
  private readonly sequences = new Map<number, string[][]>();

  constructor(key: string, params: TextIndexParams) {
    super(key, params);
    this.tokenizer = createTokenizer(params);
  }

  indexedPoints(): number {
    return this.sequences.size;
  }

  matchValues(values: readonly JsonValue[], match: Match): boolean | undefined {
    if (!isTextMatch(match)) return undefined;
    const sequences = this.sequencesOf(flatten(values));
    const query = this.queryTokens(match);
    if (query.length === 0) return false;
    if (match.kind === 'phrase') return sequences.some((s) => containsRun(s, query));
    const tokens = new Set(sequences.flat());
    return match.kind === 'text' ? query.every((t) => tokens.has(t)) : query.some((t) => tokens.has(t));
  }

  protected insert(offset: number, elements: JsonValue[]): void {
    const sequences = this.sequencesOf(elements);
    if (sequences.length === 0) return;
    this.sequences.set(offset, sequences);
    this.tokens.set(offset, sequences.flat());
  }

  protected erase(offset: number): void {
    this.sequences.delete(offset);
    this.tokens.delete(offset);
  }

  protected selectValues(test: SoleTest, size: number): Bitset | undefined {
    if (!('match' in test) || !isTextMatch(test.match)) return undefined;
    const match = test.match;
    const query = this.queryTokens(match);
    if (match.kind === 'textAny') return this.tokens.select(query, size);
    const holders = this.holdersOfAll(query);
    const found = match.kind === 'phrase'
      ? holders.filter((offset) => this.sequences.get(offset)!.some((s) => containsRun(s, query)))
      : holders;
    return bitsetOf(size, found);
  }

  private sequencesOf(elements: readonly JsonValue[]): string[][] {
    return elements.filter((e): e is string => typeof e === 'string').map((s) => this.tokenizer.document(s));
  }

  /** A phrase is read as stored text (its token order matters); other queries as queries. */
  private queryTokens(match: TextMatch): string[] {
    return match.kind === 'phrase' ? this.tokenizer.document(match.text) : this.tokenizer.query(match.text);
  }

  /** Points holding every token of a non-empty query, from the rarest token's postings. */
  private holdersOfAll(query: string[]): number[] {
    if (query.length === 0) return [];
    const postings = [...new Set(query)].map((t) => this.tokens.offsetsOf(t)).sort((a, b) => a.size - b.size);
    const [rarest, ...rest] = postings;
    return [...rarest].filter((offset) => rest.every((p) => p.has(offset)));
  }
}

function containsRun(sequence: string[], run: string[]): boolean {
  for (let start = 0; start + run.length <= sequence.length; start++) {
    let i = 0;
    while (i < run.length && sequence[start + i] === run[i]) i++;
    if (i === run.length) return true;
  }
  return false;
}
