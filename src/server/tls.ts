// HTTPS on the service port when `service.enable_tls` is set: the certificate chain and private
// key come from the PEM files `tls.cert` and `tls.key` (Qdrant's settings).

import { readFileSync } from 'node:fs';
import type { ServerOptions } from 'node:https';
import type { QuiverConfig } from '../config/config.js';

/** The HTTPS options of the server, or null to serve plain HTTP. */
export function httpsOptions(config: QuiverConfig): ServerOptions | null {
  if (!config.service.enable_tls) return null;
  const { cert, key } = config.tls;
  if (!cert || !key) throw new Error('service.enable_tls needs tls.cert and tls.key (PEM files)');
  return { cert: readFileSync(cert), key: readFileSync(key) };
}
