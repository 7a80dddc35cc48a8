import { QueryFailedError } from 'typeorm';
import { isTransientDatabaseError } from './transient-errors';

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
