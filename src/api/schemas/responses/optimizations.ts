// GET /collections/{name}/optimizations: Qdrant's OptimizationsResponse. A progress tree nests
// to any depth, so it is a named schema the others refer to (register SHARED_RESPONSE_SCHEMAS).

import type { SchemaObject } from 'ajv';
import { seq, str, uint, unitEnum } from '../builders.js';
import { anyOf, closed, COUNT, DATE_TIME, F64, nullable, tagged, UUID } from './shape.js';

const PROGRESS_TREE_ID = 'ProgressTree';

export const PROGRESS_TREE = closed({
  name: str(),
  started_at: nullable(DATE_TIME),
  finished_at: nullable(DATE_TIME),
  duration_sec: nullable(F64),
  done: nullable(uint('u64')),
  total: nullable(uint('u64')),
  children: seq({ $ref: PROGRESS_TREE_ID }),
}, ['name']);

/** Schemas other response schemas refer to by id, to be added to the validating Ajv instance first. */
export const SHARED_RESPONSE_SCHEMAS: Readonly<Record<string, SchemaObject>> = { [PROGRESS_TREE_ID]: PROGRESS_TREE };

const SEGMENT = closed({ uuid: UUID, points_count: COUNT }, ['uuid', 'points_count']);

const OPTIMIZATION = closed({
  uuid: UUID,
  optimizer: str(),
  status: anyOf(unitEnum(['optimizing', 'done']), tagged('cancelled', str()), tagged('error', str())),
  segments: seq(SEGMENT),
  progress: { $ref: PROGRESS_TREE_ID },
}, ['uuid', 'optimizer', 'status', 'segments', 'progress']);

export const OPTIMIZATIONS_RESPONSE = closed({
  summary: closed({ queued_optimizations: COUNT, queued_segments: COUNT, queued_points: COUNT, idle_segments: COUNT },
    ['queued_optimizations', 'queued_segments', 'queued_points', 'idle_segments']),
  running: seq(OPTIMIZATION),
  queued: nullable(seq(closed({ optimizer: str(), segments: seq(SEGMENT) }, ['optimizer', 'segments']))),
  completed: nullable(seq(OPTIMIZATION)),
  idle_segments: nullable(seq(SEGMENT)),
}, ['summary', 'running']);
