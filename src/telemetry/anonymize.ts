// `anonymize=true`: collection names are replaced by a stable digest, so reports can be shared
// without naming what the node stores, yet entries of one collection still line up.

import { createHash } from 'node:crypto';

export type Namer = (name: string) => string;

export const plainNames: Namer = (name) => name;

export const anonymousNames: Namer = (name) => createHash('sha256').update(name).digest('hex').slice(0, 16);

export function namerFor(anonymize: boolean | undefined): Namer {
  return anonymize ? anonymousNames : plainNames;
}
