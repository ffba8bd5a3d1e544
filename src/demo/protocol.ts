// Messages between the demo page and its Web Worker.

import type { Distance } from '../engine/index.js';
import type { PointHits, PointSearch } from './point-set.js';

export type ToWorker =
  | { type: 'load'; rows: number; cols: number; labels: Uint8Array; pixels: Uint8Array }
  | { type: 'build'; distance: Distance }
  | { type: 'search'; seq: number; distance: Distance; id: number; request: PointSearch };

export type FromWorker =
  | { type: 'progress'; distance: Distance; done: number; total: number }
  | { type: 'built'; distance: Distance; ms: number }
  | { type: 'hits'; seq: number; id: number; hits: PointHits }
  | { type: 'error'; message: string };
