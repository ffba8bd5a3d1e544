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
// `target=level` items tune Rust modules (`raft::raft`, `actix_web`, `h2`). One of Qdrant's log
// targets has a counterpart here: its access log, one line per HTTP request written by actix-web's
// logger middleware (target `actix_web::middleware::logger`, at INFO), which Quiver writes too
// (src/server/access-log.ts). Whether it is written follows tracing's rule: the directive whose
// target is the longest prefix of that one decides (`actix_web=warn` silences it), else the
// user's level. Every other target selects nothing here and is skipped.

export type PinoLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface LogFilter {
  /** The level Quiver's logger runs at. */
  level: PinoLevel;
  /** Directives tracing could not parse (a `target=level` whose level is no level): Qdrant ignores them with a warning. */
  ignored: string[];
  /** Whether the access log (a line per request at INFO, under actix-web's logger target) is written. */
  accessLog: boolean;
}

/** The target of Qdrant's access log lines. */
const ACCESS_LOG_TARGET = 'actix_web::middleware::logger';

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

/** Levels by verbosity, as the digits of a directive number them (0 off ... 5 trace). */
const BY_VERBOSITY: readonly PinoLevel[] = ['silent', 'error', 'warn', 'info', 'debug', 'trace'];

function directiveLevel(text: string): PinoLevel {
  return /^[0-5]$/.test(text) ? BY_VERBOSITY[Number(text)] : LEVELS.get(text.toLowerCase())!;
}

/** Whether `target` (a module path) falls under a directive's target: the same path or one of its modules. */
function under(target: string, directive: string): boolean {
  return target === directive || target.startsWith(`${directive}::`);
}

/** The level a well-formed `target=level` directive set for `target`, the longest such target winning; null when none names it. */
function targetLevel(items: string[], target: string): PinoLevel | null {
  let best: { length: number; level: PinoLevel } | null = null;
  for (const item of items) {
    const equals = item.lastIndexOf('=');
    if (equals < 0) continue;
    // A directive may also name a span (`target[span]=level`): only its target is read here.
    const name = item.slice(0, equals).trim().replace(/\[.*$/, '');
    const level = item.slice(equals + 1).trim();
    if (!isDirectiveLevel(level) || !under(target, name)) continue;
    // Of equally long ones the later wins, as a later directive replaces an earlier one.
    if (best === null || name.length >= best.length) best = { length: name.length, level: directiveLevel(level) };
  }
  return best?.level ?? null;
}

export function parseLogFilter(filter: string): LogFilter {
  const items = filter.split(',');
  const bare = [...items].reverse().find((item) => LEVELS.has(item.toLowerCase()));
  const ignored = items.filter((item) => {
    const equals = item.lastIndexOf('=');
    return equals >= 0 && !isDirectiveLevel(item.slice(equals + 1).trim());
  });
  const level = bare === undefined ? DEFAULT_LEVEL : LEVELS.get(bare.toLowerCase())!;
  const accessLevel = targetLevel(items, ACCESS_LOG_TARGET) ?? level;
  return { level, ignored, accessLog: BY_VERBOSITY.indexOf(accessLevel) >= BY_VERBOSITY.indexOf('info') };
}
