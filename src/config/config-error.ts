// A configuration the node cannot start with: a bad value, flag or file. Not an HTTP error:
// `src/main.ts` prints the message and exits with status 2 (as Qdrant's command-line parser does).

export class ConfigError extends Error {}
