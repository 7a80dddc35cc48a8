import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { hash, verify } from '@node-rs/argon2';

/**
 * Client secrets are stored only as Argon2id hashes: slow on purpose, so a leaked table resists
 * guessing. @node-rs/argon2 hashes and verifies on libuv's thread pool, so a verification
 * (~20 ms of CPU) never holds up the event loop, only a pool thread.
 */
@Injectable()
export class SecretHasher {
  private decoy: Promise<string> | undefined;

  hash(secret: string): Promise<string> {
    // Argon2id with the library's defaults (19 MiB, 2 passes): OWASP's recommended minimum.
    return hash(secret);
  }

  async verify(hashed: string, secret: string): Promise<boolean> {
    try {
      return await verify(hashed, secret);
    } catch {
      return false;
    }
  }

  /**
   * The hash of a random secret nobody holds, made as `hash` makes every stored one: verifying
   * against it costs what verifying a real one costs and never matches, so a secret for a
   * client_id that does not exist takes as long to refuse as a wrong one for one that does.
   */
  decoyHash(): Promise<string> {
    this.decoy ??= this.hash(randomBytes(32).toString('base64url')).catch((error: unknown) => {
      this.decoy = undefined;
      throw error;
    });
    return this.decoy;
  }
}
