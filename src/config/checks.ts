// The checks a configuration value passes before the node starts; each failure is a ConfigError
// naming the key, the value and what was expected.

import { ConfigError } from './config-error.js';

export function checkBoolean(key: string, value: unknown): void {
  if (typeof value !== 'boolean') throw new ConfigError(`invalid ${key}: ${String(value)} (true or false)`);
}

/** A whole number from 1 to `max` (Qdrant's `range(min = 1)` on its unsigned settings). */
export function checkPositiveInteger(key: string, value: unknown, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) throw new ConfigError(`invalid ${key}: ${String(value)} (a whole number from 1 to ${max})`);
}

export function checkSeconds(key: string, value: unknown): void {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) throw new ConfigError(`invalid ${key}: ${String(value)} (a positive number of seconds)`);
}

/** A TCP port (Qdrant's u16); `allowZero` for a port the system may choose. */
export function checkPort(key: string, value: unknown, allowZero: boolean): void {
  const min = allowZero ? 0 : 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > 65535) throw new ConfigError(`invalid ${key}: ${String(value)} (a port from ${min} to 65535)`);
}

/** An absolute http:// or https:// URL with a host, as `URL` reads it. */
export function httpUrl(key: string, raw: string, example: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new ConfigError(`invalid ${key}: ${raw} (an absolute http:// or https:// URI, e.g. ${example})`);
  }
  return url;
}
