// Filters inside a shard: the internal filter types, the set of live offsets matching a filter
// (selectMatching), and the check of a single point (matchesPayload).

export type * from './types.js';
export { indexSemantics, planFilter, selectMatching, type FilterPlan, type FilterSource } from './select.js';
export { matchesPayload, type PointData, type SemanticsLookup } from './evaluate.js';
export { flatten, formatJsonPath, parseJsonPath, valuesAt, type JsonPath, type PathItem } from './json-path.js';
export { parseDatetime } from './datetime.js';
export { canonicalUuid } from './uuid.js';
export { allOf, exceptIds, onlyIds } from './combine.js';
