import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Seals webhook signing secrets for storage. A signing secret must be read back to sign, so it
 * cannot be hashed like a client secret or a token; it is encrypted (AES-256-GCM) under a key
 * that is not in the database, so a copy of the database alone signs nothing.
 * Sealed form: `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url); the key id names the key a
 * secret was sealed under, so a wrong key is told apart from damaged data.
 */
export class SecretBox {
  private readonly key: Buffer;
  readonly keyId: string;

  /**
   * `purpose` keeps the keys of different uses apart: a webhook signing secret sealed under one
   * key material cannot be opened as a provider token sealed under the same.
   */
  constructor(keyMaterial: string, purpose = 'webhook-secrets') {
    this.key = createHash('sha256').update(`${purpose}:${keyMaterial}`).digest();
    this.keyId = createHash('sha256').update(this.key).digest('base64url').slice(0, 8);
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', this.keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, keyId, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || data === undefined) throw new SecretBoxError('the stored signing secret is not in a known form');
    if (keyId !== this.keyId) throw new SecretBoxError('the signing secret was sealed under another WEBHOOK_SECRETS_KEY');
    try {
      // authTagLength: without it GCM checks only the bytes of a shortened tag, so a tag cut to
      // its first bytes would pass. Inside the try: a malformed IV or tag is damaged data too.
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('the stored signing secret failed its integrity check');
    }
  }
}

export class SecretBoxError extends Error {
  override name = 'SecretBoxError';
}

/**
 * A new signing secret: 32 random bytes in standard base64, the form the API family's SDKs and
 * the Standard Webhooks libraries take as is.
 */
export const newSigningSecret = (): string => randomBytes(32).toString('base64');
