// Each request's logger (Fastify's request.log, bound to the request's id), made only when
// something is logged through it at a level the server's logger writes. Fastify makes a pino child
// logger for every request otherwise, though most requests log nothing through it (the access
// log line is written by the server's own logger, access-log.ts).

import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type LogFn = FastifyBaseLogger['info'];
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** The server's logger: pino, which says which levels it writes. */
type ParentLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

class RequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(private readonly parent: ParentLogger, private readonly bindings: Bindings, private readonly options: ChildOptions) {}

  private get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  private write(level: Level, args: unknown[]): void {
    if (this.made !== null || this.parent.isLevelEnabled(level)) (this.logger[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void { this.write('fatal', args); }
  error(...args: unknown[]): void { this.write('error', args); }
  warn(...args: unknown[]): void { this.write('warn', args); }
  info(...args: unknown[]): void { this.write('info', args); }
  debug(...args: unknown[]): void { this.write('debug', args); }
  trace(...args: unknown[]): void { this.write('trace', args); }
  silent(): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory option. */
export const requestLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  // Without a logger (`logger: false`) Fastify's stand-in writes nothing and is its own child.
  if (typeof (logger as Partial<ParentLogger>).isLevelEnabled !== 'function') return logger.child(bindings, options);
  return new RequestLogger(logger as ParentLogger, bindings, options) as unknown as FastifyBaseLogger & { [K in Level]: LogFn };
};
