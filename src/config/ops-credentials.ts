import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppConfig } from './app-config';

export interface OpsCredentials {
  username: string;
  password: string;
  /** True when the password was generated for the embedded default (print it for the newcomer). */
  generated: boolean;
}

/**
 * The ops dashboard never runs without credentials. Production must configure them (config
 * validation enforces it); the embedded default generates a password once and keeps it under
 * the data directory, so it survives restarts.
 */
export function resolveOpsCredentials(config: AppConfig): OpsCredentials {
  const username = config.OPS_USERNAME ?? 'ops';
  if (config.OPS_PASSWORD) return { username, password: config.OPS_PASSWORD, generated: false };
  const file = join(config.EMBEDDED_DATA_DIR, 'ops-password');
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored.length >= 12) return { username, password: stored, generated: true };
  }
  const password = randomBytes(18).toString('base64url');
  mkdirSync(config.EMBEDDED_DATA_DIR, { recursive: true });
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { username, password, generated: true };
}
