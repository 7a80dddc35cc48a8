import { QueryFailedError } from 'typeorm';
import { isDatabaseBusyError, isDatabaseUnavailableError, isTransientDatabaseError } from './transient-errors';

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

describe('isDatabaseBusyError', () => {
  it('tells work the database refused or undid for want of a turn: deadlocks, serialization failures, lock and statement timeouts, no connection slot', () => {
    for (const code of ['40P01', '40001', '55P03', '57014', '53300']) expect(isDatabaseBusyError(failed(code))).toBe(true);
    // node-postgres raises a connect-time refusal as a plain error with the code.
    expect(isDatabaseBusyError(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toBe(true);
  });

  it('leaves out a database gone, a commit of unknown outcome, a broken server and faults in the work', () => {
    for (const code of ['08006', '57P01', '40003', '53100', '53200', '23505', '22P02']) expect(isDatabaseBusyError(failed(code))).toBe(false);
    expect(isDatabaseBusyError(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(isDatabaseBusyError(new Error('boom'))).toBe(false);
    expect(isDatabaseBusyError(undefined)).toBe(false);
  });
});
