import { createHash, randomBytes } from 'node:crypto';

/**
 * Codes and access tokens are 256 random bits; only their SHA-256 is stored. A fast hash is
 * right here: nothing about a random 256-bit value can be guessed, so slowness buys nothing
 * and would tax every API call. (Client secrets, chosen once, get a slow hash elsewhere.)
 */
export function mintOpaqueSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function digestOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
