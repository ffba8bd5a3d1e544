// Deterministic crash points for the kill -9 tests: with QUIVER_TEST_CRASH_AT=STEP:SEQ in the
// environment at start, the process kills itself with SIGKILL when the shard reaches STEP for
// log entry SEQ, as a power cut or an OOM kill would stop it there. Unset, every call is a no-op.

export type CrashStep =
  /** The entry is durable in the log (with the records too, for wait=true); no reply sent yet. */
  | 'after-log-append'
  /** A wait=false entry was acknowledged and is about to be applied. */
  | 'before-apply'
  /** A flush holding the entry's records and an applied marker at or past it is written; the log not truncated yet. */
  | 'after-flush-write';

const STEPS: readonly CrashStep[] = ['after-log-append', 'before-apply', 'after-flush-write'];

function armed(): { step: CrashStep; seq: number } | null {
  const value = process.env.QUIVER_TEST_CRASH_AT;
  if (!value) return null;
  const [step, seq] = value.split(':');
  if (!STEPS.includes(step as CrashStep) || !/^\d+$/.test(seq ?? '')) throw new Error(`QUIVER_TEST_CRASH_AT must be STEP:SEQ with STEP one of ${STEPS.join(', ')}, got "${value}"`);
  return { step: step as CrashStep, seq: Number(seq) };
}

const target = armed();

/** Stops the process when armed for `step` of any entry `firstSeq..lastSeq` (a flush covers a range of entries). */
export function crashPoint(step: CrashStep, firstSeq: number, lastSeq = firstSeq): void {
  if (target && target.step === step && target.seq >= firstSeq && target.seq <= lastSeq) process.kill(process.pid, 'SIGKILL');
}
