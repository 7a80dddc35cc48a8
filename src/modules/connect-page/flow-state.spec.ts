import { randomBytes } from 'node:crypto';
import { DomainError } from '../../domain/shared/domain-error';
import { FLOW_STATE_TTL_MS, FlowStateSigner } from './flow-state';

describe('FlowStateSigner', () => {
  let now = 1_000_000;
  const signer = new FlowStateSigner(randomBytes(32), () => now);
  const state = { sessionId: 's-1', state: 'st', origin: null, providerId: 'gusto', authMethod: 'credential', entityNames: ['Acme'] };

  const rejects = (token: unknown) => {
    expect(() => signer.verify(token)).toThrow(DomainError);
    try {
      signer.verify(token);
    } catch (error) {
      expect((error as DomainError).serviceCode).toBe('invalid_flow_state');
    }
  };

  it('returns what it signed', () => {
    expect(signer.verify(signer.sign(state))).toEqual({ ...state, issuedAt: now });
  });

  it('rejects a changed payload, a changed signature and garbage', () => {
    const [payload, mac] = signer.sign(state).split('.');
    const forged = Buffer.from(JSON.stringify({ ...state, entityNames: ['Acme', 'Other'], issuedAt: now })).toString('base64url');
    rejects(`${forged}.${mac}`);
    rejects(`${payload}.${mac.slice(0, -2)}AA`);
    rejects(`${payload}.${mac}.x`);
    rejects('nonsense');
    rejects(undefined);
    rejects(['a', 'b']);
  });

  it('rejects a token signed by another process (another key)', () => {
    rejects(new FlowStateSigner(randomBytes(32), () => now).sign(state));
  });

  it('rejects a token older than its lifetime', () => {
    const token = signer.sign(state);
    now += FLOW_STATE_TTL_MS + 1;
    rejects(token);
  });

  it('accepts pages signed by another instance with the same configured secret, and only those', () => {
    const secret = 'a-shared-secret-of-at-least-32-characters';
    const token = FlowStateSigner.fromSecret(secret).sign(state);
    expect(FlowStateSigner.fromSecret(secret).verify(token)).toMatchObject(state);
    expect(() => FlowStateSigner.fromSecret(`${secret}!`).verify(token)).toThrow(DomainError);
    expect(() => FlowStateSigner.fromSecret(undefined).verify(token)).toThrow(DomainError);
  });
});
