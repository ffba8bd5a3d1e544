// Collections a search-like request reads besides its own: `lookup_from` (in the request, in
// each request of a batch, in prefetches at any depth) and `with_lookup` of grouped requests.
// A collection-scoped key must have access to each of them.

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Names found in the places Qdrant reads other collections from; the body is not validated yet. */
export function referencedCollections(body: unknown): string[] {
  const names: string[] = [];
  // Iterative: prefetches nest to any depth the client chooses.
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...node);
      continue;
    }
    if (!isNode(node)) continue;
    const lookupFrom = node.lookup_from;
    if (isNode(lookupFrom) && typeof lookupFrom.collection === 'string') names.push(lookupFrom.collection);
    const withLookup = node.with_lookup;
    if (typeof withLookup === 'string') names.push(withLookup);
    else if (isNode(withLookup) && typeof withLookup.collection === 'string') names.push(withLookup.collection);
    pending.push(node.searches, node.prefetch);
  }
  return names;
}
