// Qdrant's shard transfer methods (src/cluster/transfer-runner.ts runs them): `stream_records`
// (every record, in batches, after the receiver's copy is cleared), `snapshot` (the source's
// shard part, downloaded and restored by the receiver) and `wal_delta` (only the operations the
// receiver's recovery point misses, from the source's operation log; src/cluster/wal-delta.ts).
// Qdrant's internal `resharding_stream_records` is refused where it is asked for.

export const TRANSFER_METHODS = ['stream_records', 'snapshot', 'wal_delta'] as const;

export type TransferMethod = (typeof TRANSFER_METHODS)[number];

export function isTransferMethod(method: unknown): method is TransferMethod {
  return (TRANSFER_METHODS as readonly unknown[]).includes(method);
}

/** The receiver's state while a transfer of `method` runs: Qdrant's Partial for a stream, Recovery for a snapshot or a delta. */
export function receiverState(method: TransferMethod): 'Partial' | 'Recovery' {
  return method === 'stream_records' ? 'Partial' : 'Recovery';
}
