// Search answers: lists of scored points (search, recommend, discover and their batches), the
// query API's {points}, groups, and the two renderings of the distance matrix.

import { seq, str, uint } from '../builders.js';
import { POINT_ID, RECORD, SCORED_POINT } from './points.js';
import { anyOf, closed, F32, nullable } from './shape.js';

export const SCORED_POINTS = seq(SCORED_POINT);

export const SCORED_POINT_BATCH = seq(SCORED_POINTS);

export const QUERY_RESPONSE = closed({ points: SCORED_POINTS }, ['points']);

/** GroupId: the group_by field's value (a string or an integer). */
const GROUP_ID = anyOf(str(), { type: 'integer' });

export const GROUPS_RESULT = closed({
  groups: seq(closed({ hits: SCORED_POINTS, id: GROUP_ID, lookup: nullable(RECORD) }, ['hits', 'id'])),
}, ['groups']);

export const MATRIX_PAIRS = closed({
  pairs: seq(closed({ a: POINT_ID, b: POINT_ID, score: F32 }, ['a', 'b', 'score'])),
}, ['pairs']);

export const MATRIX_OFFSETS = closed({
  offsets_row: seq(uint('u64')),
  offsets_col: seq(uint('u64')),
  scores: seq(F32),
  ids: seq(POINT_ID),
}, ['offsets_row', 'offsets_col', 'scores', 'ids']);
