// An index built in memory, loaded again from its image with its originals (and optionally its
// graph links) paged, as a shard loads a cold vector on a restart: what the benches' cold series
// measure. The page files belong to no shard; the caller closes them with the index.

import { VectorIndex } from '../engine/index.js';
import { engineModule } from '../runtime/wasm-module.js';
import { DEFAULT_PAGE_BUDGET_BYTES, PageFiles } from '../shard/page-files.js';

export interface ColdIndex {
  index: VectorIndex;
  pages: PageFiles;
}

/** `built` loaded from its image with its stored vectors (lists) cold, and its level-0 links too when `graph`. */
export async function loadCold(built: VectorIndex, graph: boolean): Promise<ColdIndex> {
  const pages = PageFiles.anonymous(graph ? [0, 2] : [0]);
  try {
    const index = await VectorIndex.load(await engineModule(), built.serializeParts(), {
      paging: { vectors: true, codes: false, graph, budgetBytes: DEFAULT_PAGE_BUDGET_BYTES, store: pages },
    });
    return { index, pages };
  } catch (error) {
    pages.close();
    throw error;
  }
}
