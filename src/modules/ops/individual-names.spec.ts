import { Saga } from '../../domain/sagas/saga';
import { individualIdsIn, MAX_IDS, payloadScope, sagaIndividualId } from './individual-names';

const A = '5b0e7a0e-4c1e-4a8f-9d7e-2f1f0c3b6a11';
const B = '0f3a6c1e-1111-4222-8333-944455556666';
const C = 'c0ffee00-aaaa-4bbb-8ccc-dddddddddddd';

describe('individualIdsIn', () => {
  it('finds individual_id values and individual_ids lists at any depth, lower-case, each once', () => {
    const enroll = { benefit_id: C, groups: [{ effective_date: '2026-01-01', items: [{ individual_id: A.toUpperCase() }, { individual_id: B }] }] };
    const result = { body: [{ individual_id: A, code: 200 }] };
    const unenroll = { benefit_id: C, individual_ids: [B, C] };
    expect(individualIdsIn([enroll, result, unenroll]).sort()).toEqual([A, B, C].sort());
  });

  it('ignores other keys, values that are not UUIDs, and non-objects', () => {
    expect(individualIdsIn({ benefit_id: A, job_id: B, data: { individual_id: 'x' }, individual_ids: 'not-a-list' })).toEqual([]);
    expect(individualIdsIn({ individual_ids: [A, 7, null, 'nope'] })).toEqual([A]);
    for (const value of [null, undefined, 'text', 42, []]) expect(individualIdsIn(value)).toEqual([]);
  });

  it('stops at a bounded depth and count', () => {
    let deep: Record<string, unknown> = { individual_id: A };
    for (let i = 0; i < 20; i++) deep = { next: deep };
    expect(individualIdsIn(deep)).toEqual([]);
    const many = Array.from({ length: MAX_IDS + 5 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    expect(individualIdsIn({ individual_ids: many })).toHaveLength(MAX_IDS);
  });
});

describe('sagaIndividualId', () => {
  const saga = (steps: Saga['steps']) => ({ steps }) as Saga;

  it('is the individual the first step recorded (HRIS sagas), else null', () => {
    expect(sagaIndividualId(saga([{ at: '', name: 'employee_hired', detail: { event_id: B, individual_id: A.toUpperCase() } }]))).toBe(A);
    expect(sagaIndividualId(saga([{ at: '', name: 'requested', detail: { individuals: 2 } }]))).toBeNull();
    expect(sagaIndividualId(saga([]))).toBeNull();
  });
});

describe('payloadScope', () => {
  it('is the connection and entity an HRIS event names', () => {
    expect(payloadScope({ connection_id: A, entity_id: B, data: {} })).toEqual({ connectionId: A, entityId: B });
    expect(payloadScope({ connection_id: A.toUpperCase() })).toEqual({ connectionId: A, entityId: null });
    expect(payloadScope({ connection_id: A, entity_id: 'x' })).toEqual({ connectionId: A, entityId: null });
  });

  it('is null without a connection id', () => {
    for (const payload of [null, 'text', [A], {}, { connection_id: 'x' }, { entity_id: A }]) expect(payloadScope(payload)).toBeNull();
  });
});
