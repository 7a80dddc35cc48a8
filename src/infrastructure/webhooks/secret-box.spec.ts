import { newSigningSecret, SecretBox, SecretBoxError } from './secret-box';

const SECRET = 'c2VjcmV0LXNpZ25pbmcta2V5LW9mLTMyLWJ5dGVzISE=';

/** The sealed form with one of its dot-separated parts (1 key id, 2 iv, 3 tag, 4 ciphertext) rewritten. */
function withPart(sealed: string, index: number, rewrite: (bytes: Buffer) => Buffer): string {
  const parts = sealed.split('.');
  parts[index] = rewrite(Buffer.from(parts[index], 'base64url')).toString('base64url');
  return parts.join('.');
}

function flipFirstByte(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy[0] ^= 0x01;
  return copy;
}

function openError(box: SecretBox, sealed: string): SecretBoxError {
  try {
    box.open(sealed);
  } catch (error) {
    if (error instanceof SecretBoxError) return error;
    throw new Error(`expected a SecretBoxError for ${JSON.stringify(sealed)}, got ${String(error)}`);
  }
  throw new Error(`expected ${JSON.stringify(sealed)} not to open`);
}

describe('SecretBox', () => {
  const box = new SecretBox('the-webhook-secrets-key');

  it('opens what it sealed, also in another instance built from the same key', () => {
    const sealed = box.seal(SECRET);
    expect(box.open(sealed)).toBe(SECRET);
    expect(new SecretBox('the-webhook-secrets-key').open(sealed)).toBe(SECRET);
    expect(box.open(box.seal('ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('seals into the documented form, naming its key', () => {
    const sealed = box.seal(SECRET);
    const parts = sealed.split('.');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('v1');
    expect(parts[1]).toBe(box.keyId);
    for (const part of parts.slice(1)) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(parts[2], 'base64url')).toHaveLength(12);
    expect(Buffer.from(parts[3], 'base64url')).toHaveLength(16);
    expect(new SecretBox('another key').keyId).not.toBe(box.keyId);
  });

  it('does not keep the secret readable in the sealed text', () => {
    const sealed = box.seal(SECRET);
    expect(sealed).not.toContain(SECRET);
    expect(sealed).not.toContain(SECRET.slice(0, 12));
    expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64url').slice(0, 12));
    expect(sealed).not.toContain(Buffer.from(SECRET, 'base64').toString('base64url').slice(0, 12));
  });

  it('seals one secret differently each time (a random IV)', () => {
    const first = box.seal(SECRET);
    const second = box.seal(SECRET);
    expect(second).not.toBe(first);
    expect(second.split('.')[2]).not.toBe(first.split('.')[2]);
    expect([box.open(first), box.open(second)]).toEqual([SECRET, SECRET]);
  });

  it('tells a secret sealed under another key apart from damaged data', () => {
    const sealed = new SecretBox('an-older-key').seal(SECRET);
    const error = openError(box, sealed);
    expect(error.name).toBe('SecretBoxError');
    expect(error.message).toContain('WEBHOOK_SECRETS_KEY');
  });

  it.each([
    ['the ciphertext', 4],
    ['the tag', 3],
    ['the IV', 2],
  ])('refuses a sealed secret whose %s was changed (integrity)', (_name, index) => {
    const sealed = box.seal(SECRET);
    const error = openError(box, withPart(sealed, index, flipFirstByte));
    expect(error.message).toBe('the stored signing secret failed its integrity check');
  });

  it('refuses a sealed secret whose ciphertext was cut short or extended', () => {
    const sealed = box.seal(SECRET);
    expect(openError(box, withPart(sealed, 4, (b) => b.subarray(0, b.length - 1))).message).toContain('integrity');
    expect(openError(box, withPart(sealed, 4, (b) => Buffer.concat([b, Buffer.from([0])]))).message).toContain('integrity');
  });

  // GCM checks only as many tag bytes as it is given unless told the tag's length: a tag cut to
  // its first bytes must not let a damaged or forged value through.
  it.each([12, 8, 4, 0])('refuses a sealed secret whose tag was cut to %i bytes', (bytes) => {
    const sealed = box.seal(SECRET);
    expect(openError(box, withPart(sealed, 3, (b) => b.subarray(0, bytes))).message).toContain('integrity');
  });

  it.each([
    ['empty', () => ''],
    ['not sealed at all', () => 'not a sealed secret'],
    ['the secret itself', () => SECRET],
    ['another version', () => box.seal(SECRET).replace(/^v1\./, 'v2.')],
    ['missing parts', () => box.seal(SECRET).split('.').slice(0, 4).join('.')],
    ['the right key id and garbage', () => `v1.${box.keyId}.!!.??.zz`],
    ['the right key id and empty parts', () => `v1.${box.keyId}...`],
    ['an empty IV', () => withPart(box.seal(SECRET), 2, () => Buffer.alloc(0))],
  ])('refuses garbage (%s) with a SecretBoxError', (_name, garbage) => {
    expect(openError(box, garbage()).name).toBe('SecretBoxError');
  });
});

describe('newSigningSecret', () => {
  it('is 32 random bytes in standard base64 that survives a base64 round trip unchanged', () => {
    const secrets = Array.from({ length: 200 }, () => newSigningSecret());
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      const bytes = Buffer.from(secret, 'base64');
      expect(bytes).toHaveLength(32);
      // The API family's SDK refuses a secret unless toBase64(fromBase64(s)) === s.
      expect(bytes.toString('base64')).toBe(secret);
      expect(Buffer.from(atob(secret), 'latin1').equals(bytes)).toBe(true);
      expect(btoa(atob(secret))).toBe(secret);
    }
    expect(new Set(secrets).size).toBe(secrets.length);
  });

  it('survives sealing', () => {
    const secret = newSigningSecret();
    const box = new SecretBox('k');
    expect(box.open(box.seal(secret))).toBe(secret);
  });
});
