import { Injectable } from '@nestjs/common';
import { hash, verify } from '@node-rs/argon2';

/** Client secrets are stored only as Argon2id hashes: slow on purpose, so a leaked table resists guessing. */
@Injectable()
export class SecretHasher {
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
}
