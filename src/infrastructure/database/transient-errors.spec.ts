import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailableError, isTransientDatabaseError } from './transient-errors';

const failed = (code: string) => new QueryFailedError('SELECT 1', [], Object.assign(new Error('x'), { code }));

describe('isTransientDatabaseError', () => {
  it('retries deadlocks, serialization failures, lost connections and shutdowns', () => {
    for (const code of ['40P01', '40001', '08006', '57P01', '55P03', '53300']) expect(isTransientDatabaseError(failed(code))).toBe(true);
    expect(isTransientDatabaseError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransientDatabaseError(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('does not retry faults in the work itself', () => {
    for (const code of ['23505', '42703', '22P02', '23503']) expect(isTransientDatabaseError(failed(code))).toBe(false);
    expect(isTransientDatabaseError(new Error('boom'))).toBe(false);
    expect(isTransientDatabaseError(undefined)).toBe(false);
  });
});

describe('isDatabaseUnavailableError', () => {
  it('tells a database that cannot be reached or is going away', () => {
    // 08P01: what PgBouncer answers while it cannot log in to the server (server_login_retry).
    for (const code of ['08006', '08001', '08P01', '57P01', '57P02', '57P03']) expect(isDatabaseUnavailableError(failed(code))).toBe(true);
    expect(isDatabaseUnavailableError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailableError(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('leaves out what the work met in a database that answered: deadlocks, timeouts, faults', () => {
    for (const code of ['40P01', '40001', '55P03', '57014', '53300', '23505', '22P02']) expect(isDatabaseUnavailableError(failed(code))).toBe(false);
    expect(isDatabaseUnavailableError(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailableError(undefined)).toBe(false);
  });
});
