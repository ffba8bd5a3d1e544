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

/** Levels by verbosity, as the digits of a directive number them (0 off ... 5 trace). */
const BY_VERBOSITY: readonly PinoLevel[] = ['silent', 'error', 'warn', 'info', 'debug', 'trace'];

/** A directive's level as tracing reads it (a name in any case, or 0 off to 5 trace); null when it is none. */
function directiveLevel(text: string): PinoLevel | null {
  return /^[0-5]$/.test(text) ? BY_VERBOSITY[Number(text)] : LEVELS.get(text.toLowerCase()) ?? null;
}

/** Whether `target` (a module path) falls under a directive's target: the same path or one of its modules. */
function under(target: string, directive: string): boolean {
  return target === directive || target.startsWith(`${directive}::`);
}

/** A `target=level` item: its text, its target and its level (null when tracing cannot read it). */
interface Directive {
  item: string;
  target: string;
  level: PinoLevel | null;
}

function directivesOf(items: string[]): Directive[] {
  return items.flatMap((item) => {
    const equals = item.lastIndexOf('=');
    if (equals < 0) return [];
    // A directive may also name a span (`target[span]=level`): only its target is read here.
    const target = item.slice(0, equals).trim().replace(/\[.*$/, '');
    return [{ item, target, level: directiveLevel(item.slice(equals + 1).trim()) }];
  });
}

/** The level the directives set for `target`, the longest matching target winning; null when none names it. */
function targetLevel(directives: Directive[], target: string): PinoLevel | null {
  let best: { length: number; level: PinoLevel } | null = null;
  for (const directive of directives) {
    if (directive.level === null || !under(target, directive.target)) continue;
    // Of equally long ones the later wins, as a later directive replaces an earlier one.
    if (best === null || directive.target.length >= best.length) best = { length: directive.target.length, level: directive.level };
  }
  return best?.level ?? null;
}

export function parseLogFilter(filter: string): LogFilter {
  const items = filter.split(',');
  const bare = [...items].reverse().find((item) => LEVELS.has(item.toLowerCase()));
  const directives = directivesOf(items);
  const ignored = directives.filter((directive) => directive.level === null).map((directive) => directive.item);
  const level = bare === undefined ? DEFAULT_LEVEL : LEVELS.get(bare.toLowerCase())!;
  const accessLevel = targetLevel(directives, ACCESS_LOG_TARGET) ?? level;
  return { level, ignored, accessLog: BY_VERBOSITY.indexOf(accessLevel) >= BY_VERBOSITY.indexOf('info') };
}
