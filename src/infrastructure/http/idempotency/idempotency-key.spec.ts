import { DomainError } from '../../../domain/shared/domain-error';
import { canonicalJson, idempotencyKeyOf, isStoredAnswer, requestFingerprint } from './idempotency-key';

describe('Idempotency-Key', () => {
  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined();
    expect(idempotencyKeyOf('a')).toBe('a');
    expect(idempotencyKeyOf('order 42 / retry:1')).toBe('order 42 / retry:1');
    expect(idempotencyKeyOf('k'.repeat(255))).toHaveLength(255);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a control character', 'a\tb'],
    ['non-ASCII', 'clé'],
  ])('refuses %s with a 400 naming the header', (_, value) => {
    let error: unknown;
    try {
      idempotencyKeyOf(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ family: 'invalid_request_error', serviceCode: 'invalid_idempotency_key' });
    expect((error as Error).message).toMatch(/^Idempotency-Key /);
  });
});

describe('request fingerprint', () => {
  it('ignores object key order at every depth but keeps array order and values', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    const one = requestFingerprint('POST', '/x?entity_ids=1', { a: 1, b: [1, 2] });
    expect(requestFingerprint('post', '/x?entity_ids=1', { b: [1, 2], a: 1 })).toBe(one);
    expect(requestFingerprint('POST', '/x?entity_ids=1', { a: 1, b: [2, 1] })).not.toBe(one);
    expect(requestFingerprint('POST', '/x?entity_ids=2', { a: 1, b: [1, 2] })).not.toBe(one);
    expect(requestFingerprint('POST', '/y?entity_ids=1', { a: 1, b: [1, 2] })).not.toBe(one);
    expect(requestFingerprint('POST', '/x?entity_ids=1', { a: '1', b: [1, 2] })).not.toBe(one);
  });

  it('tells no body from an empty object and from null', () => {
    const prints = [undefined, null, {}, []].map((body) => requestFingerprint('POST', '/x', body));
    expect(new Set(prints).size).toBe(4);
  });
});

describe('which answers are kept', () => {
  it.each([
    [200, true],
    [201, true],
    [202, true],
    [400, true],
    [403, true],
    [404, true],
    [409, true],
    [422, true],
    [401, false],
    [429, false],
    [500, false],
    [502, false],
    [504, false],
  ])('%i → %s', (status, kept) => expect(isStoredAnswer(status)).toBe(kept));
});
