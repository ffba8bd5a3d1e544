// Qdrant's `log_level` / QDRANT__LOG_LEVEL: a tracing filter, `LEVEL[,target=level]...` (e.g.
// `INFO,raft::raft=warn,actix_web=debug`, or a bare `debug`), turned into the one level Quiver's
// logger (pino) has.
//
// How Qdrant reads it (src/tracing/mod.rs `filter`): the user's level is the LAST comma-separated
// item that is a level name on its own (log's LevelFilter: OFF ERROR WARN INFO DEBUG TRACE, any
// case); with none, INFO. The whole text then goes to tracing's EnvFilter with `parse_lossy`,
// which skips a directive it cannot parse (printing "ignoring ...") instead of refusing to start,
// so a malformed filter never stops Qdrant: it runs at the level found, INFO if none.
//
// `target=level` items tune Rust modules (`raft::raft`, `actix_web`, `h2`); none of those exist
// in Quiver, whose one logger has a single level, so they select nothing here and are skipped.

export type PinoLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface LogFilter {
  /** The level Quiver's logger runs at. */
  level: PinoLevel;
  /** Directives tracing could not parse (a `target=level` whose level is no level): Qdrant ignores them with a warning. */
  ignored: string[];
}

/** log's level names (matched in any case) and the pino level each becomes; OFF silences the logger. */
const LEVELS: ReadonlyMap<string, PinoLevel> = new Map([
  ['off', 'silent'], ['error', 'error'], ['warn', 'warn'], ['info', 'info'], ['debug', 'debug'], ['trace', 'trace'],
]);

/** Qdrant's level when the filter names none. */
const DEFAULT_LEVEL: PinoLevel = 'info';

/** A directive's level as tracing reads it: a name in any case, or 0 (off) to 5 (trace). */
function isDirectiveLevel(text: string): boolean {
  return LEVELS.has(text.toLowerCase()) || /^[0-5]$/.test(text);
}

export function parseLogFilter(filter: string): LogFilter {
  const items = filter.split(',');
  const bare = [...items].reverse().find((item) => LEVELS.has(item.toLowerCase()));
  const ignored = items.filter((item) => {
    const equals = item.lastIndexOf('=');
    return equals >= 0 && !isDirectiveLevel(item.slice(equals + 1).trim());
  });
  return { level: bare === undefined ? DEFAULT_LEVEL : LEVELS.get(bare.toLowerCase())!, ignored };
}
