import { DomainError } from '../../domain/shared/domain-error';
import { openerOrigin } from './opener-origin';

const refusal = (allowed: string[], given: string | undefined): DomainError => {
  try {
    openerOrigin(allowed, given);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error(`accepted ${given}`);
};

describe('openerOrigin', () => {
  const two = ['https://app.example.com', 'http://localhost:5173'];

  it('is the given origin when it is registered, normalized as the browser writes it', () => {
    expect(openerOrigin(two, 'https://app.example.com')).toBe('https://app.example.com');
    expect(openerOrigin(two, 'HTTPS://App.Example.com:443/')).toBe('https://app.example.com');
    expect(openerOrigin(two, 'http://localhost:5173')).toBe('http://localhost:5173');
  });

  it('defaults to the only registered origin when the link names none', () => {
    expect(openerOrigin(['https://app.example.com'], undefined)).toBe('https://app.example.com');
    expect(openerOrigin(['https://app.example.com'], '')).toBe('https://app.example.com');
  });

  it('requires an origin when several are registered', () => {
    const error = refusal(two, undefined);
    expect(error).toMatchObject({ family: 'invalid_request_error', serviceCode: 'origin_required' });
    expect(error.message).toMatch(/origin is required/);
  });

  it('refuses every origin when none is registered', () => {
    expect(refusal([], undefined)).toMatchObject({ serviceCode: 'origin_not_registered' });
    expect(refusal([], 'https://app.example.com')).toMatchObject({ serviceCode: 'origin_not_registered' });
  });

  it.each([
    ['https://evil.example.com', 'origin_not_registered', /https:\/\/evil\.example\.com is not registered/],
    ['http://app.example.com', 'origin_not_registered', /is not registered/],
    ['https://app.example.com:8443', 'origin_not_registered', /is not registered/],
    ['https://app.example.com.evil.example', 'origin_not_registered', /is not registered/],
    ['https://app.example.com/path', 'invalid_origin', /must not have a path/],
    ['javascript:alert(1)', 'invalid_origin', /must use http or https/],
    ['data:text/html;base64,PHNjcmlwdD4=', 'invalid_origin', /must use http or https/],
    ['*', 'invalid_origin', /is not a URL/],
    ['null', 'invalid_origin', /is not a URL/],
  ])('refuses %s (%s)', (given, code, message) => {
    const error = refusal(two, given);
    expect(error.serviceCode).toBe(code);
    expect(error.message).toMatch(message);
  });
});
