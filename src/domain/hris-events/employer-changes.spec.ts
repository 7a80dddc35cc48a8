import { employerChangeEvents, EmployerChangesInput, hrisEventId, PersonFacts, uuidV5 } from './employer-changes';

const CONNECTION = '0b8a4d2e-8f43-4c55-9a51-3e0f6f7d1a01';
const ENTITY = '5d6c1f0e-2a4b-4e7c-8d9e-1f2a3b4c5d6e';
const ADA = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';
const CY = '33333333-3333-4333-8333-333333333333';
const AT = new Date('2026-06-01T12:00:00.000Z');
const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const person = (individualId: string, facts: Partial<PersonFacts> = {}): PersonFacts => ({
  individualId,
  startDate: '2024-03-04',
  endDate: null,
  dob: '1985-12-10',
  ...facts,
});

const changes = (previous: PersonFacts[] | null, current: PersonFacts[], extra: Partial<EmployerChangesInput> = {}) =>
  employerChangeEvents({ connectionId: CONNECTION, entityId: ENTITY, previous, current, occurredAt: AT, ...extra });

describe('employerChangeEvents', () => {
  it('publishes nothing on the first sync: it is the baseline', () => {
    expect(changes(null, [person(ADA), person(BOB, { endDate: '2026-05-01' })])).toEqual([]);
  });

  it('publishes nothing when nobody changed', () => {
    const people = [person(ADA), person(BOB, { endDate: '2026-05-01' })];
    expect(changes(people, people.map((p) => ({ ...p })))).toEqual([]);
    expect(changes([], [])).toEqual([]);
  });

  it('reports a new individual as EmployeeHired with the employment start date and the dob', () => {
    const events = changes([person(ADA)], [person(ADA), person(BOB, { startDate: '2026-05-18', dob: '1990-02-03' })]);
    expect(events).toEqual([
      {
        id: hrisEventId({ connectionId: CONNECTION, entityId: ENTITY, individualId: BOB, type: 'EmployeeHired', date: '2026-05-18' }),
        type: 'EmployeeHired',
        version: 1,
        occurred_at: '2026-06-01T12:00:00.000Z',
        connection_id: CONNECTION,
        entity_id: ENTITY,
        data: { individual_id: BOB, start_date: '2026-05-18', dob: '1990-02-03' },
      },
    ]);
  });

  it('leaves dob out when it is unknown', () => {
    const [hired] = changes([], [person(BOB, { dob: null })]);
    expect(hired.data).toEqual({ individual_id: BOB, start_date: '2024-03-04' });
    expect('dob' in hired.data).toBe(false);
  });

  it('cannot state a hire without an employment start date', () => {
    expect(changes([], [person(BOB, { startDate: null })])).toEqual([]);
  });

  it('reports an end date set now as EmployeeTerminated', () => {
    const events = changes([person(ADA), person(BOB)], [person(ADA), person(BOB, { endDate: '2026-06-15' })]);
    expect(events).toEqual([
      {
        id: hrisEventId({ connectionId: CONNECTION, entityId: ENTITY, individualId: BOB, type: 'EmployeeTerminated', date: '2026-06-15' }),
        type: 'EmployeeTerminated',
        version: 1,
        occurred_at: '2026-06-01T12:00:00.000Z',
        connection_id: CONNECTION,
        entity_id: ENTITY,
        data: { individual_id: BOB, end_date: '2026-06-15' },
      },
    ]);
  });

  it('reports a changed end date again, with the new date; an unchanged or removed one is not reported', () => {
    const moved = changes([person(BOB, { endDate: '2026-06-15' })], [person(BOB, { endDate: '2026-06-30' })]);
    expect(moved.map((e) => [e.type, e.data])).toEqual([['EmployeeTerminated', { individual_id: BOB, end_date: '2026-06-30' }]]);
    expect(changes([person(BOB, { endDate: '2026-06-15' })], [person(BOB, { endDate: '2026-06-15' })])).toEqual([]);
    expect(changes([person(BOB, { endDate: '2026-06-15' })], [person(BOB, { endDate: null })])).toEqual([]);
  });

  it('reports someone hired and gone between two syncs as hired, then terminated', () => {
    const events = changes([], [person(CY, { startDate: '2026-05-04', endDate: '2026-05-29' })]);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['EmployeeHired', { individual_id: CY, start_date: '2026-05-04', dob: '1985-12-10' }],
      ['EmployeeTerminated', { individual_id: CY, end_date: '2026-05-29' }],
    ]);
  });

  it('says nothing of someone no longer in the data, nor of other changed facts', () => {
    expect(changes([person(ADA), person(BOB)], [person(ADA)])).toEqual([]);
    expect(changes([person(ADA)], [person(ADA, { dob: '1970-01-01', startDate: '2025-01-01' })])).toEqual([]);
  });

  it('orders by individual id, whatever the input order', () => {
    const current = [person(CY), person(ADA, { endDate: '2026-07-01' }), person(BOB)];
    const events = changes([person(ADA)], current);
    expect(events.map((e) => [e.type, e.data.individual_id])).toEqual([
      ['EmployeeTerminated', ADA],
      ['EmployeeHired', BOB],
      ['EmployeeHired', CY],
    ]);
  });

  it('gives the same answer when the unchanged people are left out of both lists', () => {
    const unchanged = Array.from({ length: 20 }, (_, n) => person(`aaaaaaaa-0000-4000-8000-${String(n).padStart(12, '0')}`));
    const previous = [...unchanged, person(ADA)];
    const current = [...unchanged, person(ADA, { endDate: '2026-06-15' }), person(BOB)];
    const whole = changes(previous, current);
    expect(whole).toHaveLength(2);
    expect(changes([person(ADA)], [person(ADA, { endDate: '2026-06-15' }), person(BOB)])).toEqual(whole);
  });

  describe('event ids', () => {
    const hire = () => changes([], [person(BOB, { startDate: '2026-05-18' })])[0];

    it('are version 5 UUIDs that a re-run repeats, whatever its clock', () => {
      const first = hire();
      expect(first.id).toMatch(UUID_V5);
      expect(changes([], [person(BOB, { startDate: '2026-05-18' })], { occurredAt: new Date('2027-01-01T00:00:00Z') })[0].id).toBe(first.id);
    });

    it('differ by connection, entity, individual, type and date', () => {
      const base = { connectionId: CONNECTION, entityId: ENTITY, individualId: BOB, type: 'EmployeeHired' as const, date: '2026-05-18' };
      const ids = [
        hrisEventId(base),
        hrisEventId({ ...base, connectionId: '0b8a4d2e-8f43-4c55-9a51-3e0f6f7d1a02' }),
        hrisEventId({ ...base, entityId: '5d6c1f0e-2a4b-4e7c-8d9e-1f2a3b4c5d6f' }),
        hrisEventId({ ...base, individualId: ADA }),
        hrisEventId({ ...base, type: 'EmployeeTerminated' }),
        hrisEventId({ ...base, date: '2026-05-19' }),
      ];
      expect(new Set(ids).size).toBe(ids.length);
      expect(hire().id).toBe(ids[0]);
    });
  });
});

describe('uuidV5', () => {
  it('matches the RFC 4122 name-based UUIDs other implementations produce', () => {
    // Python: uuid.uuid5(uuid.NAMESPACE_DNS, 'www.example.com'), uuid.uuid5(uuid.NAMESPACE_URL, 'https://example.com/é')
    expect(uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(uuidV5('6ba7b811-9dad-11d1-80b4-00c04fd430c8', 'https://example.com/é')).toBe('20ecd233-a9e7-5067-a96f-fd6600ca3fda');
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('not-a-uuid', 'x')).toThrow('namespace not-a-uuid is not a UUID');
    expect(() => uuidV5('6ba7b810-9dad-11d1-80b4-00c04fd430c', 'x')).toThrow('is not a UUID');
  });
});
