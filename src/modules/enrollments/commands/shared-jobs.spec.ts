import { Connection } from '../../../domain/connections/connection';
import { ConnectionEntity } from '../../../domain/connections/entity-scope';
import { EnrollmentRequest } from '../../../domain/enrollments/enrollment-ledger';
import { OpenEnrollment } from '../enrollment-lifecycle';
import { shareJobs } from './shared-jobs';

const scope = { connection: { id: 'connection-1' } as Connection, entity: { id: 'entity-1' } as ConnectionEntity };
const benefit = (id: string) => ({ id, connectionId: 'connection-1', entityId: 'entity-1' });
const at = (minute: number) => new Date(Date.UTC(2026, 6, 2, 12, minute));

function request(benefitId: string, operation: 'enroll' | 'unenroll', people: string[], saga: string, minute: number, date = '2026-07-02'): OpenEnrollment {
  const body: Omit<EnrollmentRequest, 'jobKind'> = {
    operation,
    items: people.map((individualId) => ({ individualId, effectiveDate: date, configuration: null })),
    occurredAt: at(minute),
    sagaId: saga,
  };
  return { scope, benefit: benefit(benefitId), request: body };
}
const people = (open: OpenEnrollment) => open.request.items.map((i) => i.individualId);

describe('shareJobs', () => {
  it('makes one request per benefit and operation, each item keeping its own saga and time', () => {
    const { shared, of } = shareJobs([
      request('b1', 'enroll', ['a'], 's1', 1),
      request('b1', 'enroll', ['b', 'c'], 's2', 2),
      request('b2', 'enroll', ['a'], 's3', 3),
      request('b1', 'unenroll', ['d'], 's4', 4),
    ]);
    expect(shared.map((s) => [s.benefit.id, s.request.operation, people(s)])).toEqual([
      ['b1', 'enroll', ['a', 'b', 'c']],
      ['b2', 'enroll', ['a']],
      ['b1', 'unenroll', ['d']],
    ]);
    expect(of).toEqual([0, 0, 1, 2]);
    expect(shared[0].request.items.map((i) => [i.sagaId, i.occurredAt])).toEqual([
      ['s1', at(1)],
      ['s2', at(2)],
      ['s2', at(2)],
    ]);
    // The merged request has no time or saga of its own: its items speak for themselves.
    expect(shared[0].request).toMatchObject({ occurredAt: null, sagaId: undefined });
  });

  it('puts a request naming someone an earlier one of the same benefit named into a later round, opened after', () => {
    const { shared, of } = shareJobs([
      request('b1', 'enroll', ['a'], 's1', 1),
      request('b1', 'enroll', ['b'], 's2', 2),
      request('b1', 'enroll', ['a'], 's3', 3),
      request('b1', 'unenroll', ['b'], 's4', 4),
      request('b1', 'enroll', ['a', 'c'], 's5', 5),
      request('b1', 'enroll', ['d'], 's6', 6),
    ]);
    expect(shared.map((s) => [s.request.operation, people(s)])).toEqual([
      ['enroll', ['a', 'b', 'd']],
      ['enroll', ['a']],
      ['unenroll', ['b']],
      ['enroll', ['a', 'c']],
    ]);
    expect(of).toEqual([0, 0, 1, 2, 3, 0]);
  });

  it('keeps unenrolls of different dates apart, and leaves out requests not opened', () => {
    const { shared, of } = shareJobs([
      request('b1', 'unenroll', ['a'], 's1', 1, '2026-07-31'),
      undefined,
      request('b1', 'unenroll', ['b'], 's2', 2, '2026-08-31'),
      request('b1', 'unenroll', ['c'], 's3', 3, '2026-07-31'),
    ]);
    expect(shared.map((s) => [s.request.items[0].effectiveDate, people(s)])).toEqual([
      ['2026-07-31', ['a', 'c']],
      ['2026-08-31', ['b']],
    ]);
    expect(of).toEqual([0, undefined, 1, 0]);
  });
});
