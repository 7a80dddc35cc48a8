import { randomUUID } from 'node:crypto';
import { ManualClock } from '../../src/domain/shared/clock';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { bearer, connectEmployer, ConnectedEmployer, createApplication } from '../utils/connect';
import { startTestService, TestService, TestResponse } from '../utils/test-app';

const RULES = '/employer/pay-statement-item/rule';

const rule401k = {
  conditions: [{ field: 'type', operator: 'equals', value: '401k' }],
  attributes: { metadata: { gl_code: '4010', plan: { provider: 'Acme 401(k)', match: true } } },
};

describeWithPostgres('pay-statement item rules', () => {
  let service: TestService;
  let app: IssuedCredentials;
  let employer: ConnectedEmployer;
  const clock = new ManualClock('2026-06-01T12:00:00Z');

  beforeAll(async () => {
    service = await startTestService({ clock });
    app = await createApplication(service);
  });
  beforeEach(async () => {
    employer = await connectEmployer(service, app);
  });
  afterAll(() => service?.close());

  function send(method: string, path: string, body?: unknown, token = employer.accessToken, query = ''): Promise<TestResponse> {
    const headers: Record<string, string> = bearer(token);
    if (body !== undefined) headers['content-type'] = 'application/json';
    return service.request(`${path}${query}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  }
  const create = (body: unknown, token?: string, query?: string) => send('POST', RULES, body, token, query);
  const list = (token?: string, query?: string) => send('GET', RULES, undefined, token, query);

  describe('access', () => {
    const operations = [
      ['GET', RULES, undefined],
      ['POST', RULES, rule401k],
      ['PUT', `${RULES}/${randomUUID()}`, { priority: 3 }],
      ['DELETE', `${RULES}/${randomUUID()}`, undefined],
    ] as const;

    it.each(operations)('%s %s: 401 without a token, 400 without the version header', async (method, path, body) => {
      const headers: Record<string, string> = {
        'service-api-version': '2020-09-17',
        ...(body ? { 'content-type': 'application/json' } : {}),
      };
      const anonymous = await service.request(path, { method, headers, body: body && JSON.stringify(body) });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toMatchObject({ code: 401, name: 'authentication_error' });
      const unversioned = await service.request(path, {
        method,
        headers: { authorization: `Bearer ${employer.accessToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body && JSON.stringify(body),
      });
      expect(unversioned.status).toBe(400);
      expect(unversioned.body.service_code).toBe('missing_version_header');
    });

    it.each(operations)('%s %s: 403 without the pay_statement product', async (method, path, body) => {
      const limited = await connectEmployer(service, app, { products: ['company', 'payment'] });
      const res = await send(method, path, body, limited.accessToken);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ name: 'forbidden_error', service_code: 'product_not_granted' });
    });

    it('keeps each entity’s rules apart and refuses entities of other connections', async () => {
      const twoEntities = await connectEmployer(service, app, { entityNames: ['A', 'B'] });
      const [a, b] = twoEntities.entityIds;
      const token = twoEntities.accessToken;
      const unscoped = await create(rule401k, token);
      expect(unscoped.status).toBe(400);
      expect(unscoped.body.message).toMatch(/entity_ids is required/);
      const foreign = await create(rule401k, token, `?entity_ids=${employer.entityIds[0]}`);
      expect(foreign.status).toBe(403);
      expect(foreign.body.service_code).toBe('entity_not_authorized');

      const ofA = await create(rule401k, token, `?entity_ids=${a}`);
      expect(ofA.status).toBe(201);
      const ofB = await create({ ...rule401k, priority: 7 }, token, `?entity_ids[]=${b}`);
      expect(ofB.status).toBe(201);
      expect((await list(token, `?entity_ids=${a}`)).body.responses.map((r: { id: string }) => r.id)).toEqual([ofA.body.id]);
      expect((await list(token, `?entity_ids=${b}`)).body.responses.map((r: { id: string }) => r.id)).toEqual([ofB.body.id]);
      // A's rule is not reachable through B, nor through another connection.
      const crossEntity = await send('PUT', `${RULES}/${ofA.body.id}`, { priority: 9 }, token, `?entity_ids=${b}`);
      expect(crossEntity.status).toBe(404);
      expect(crossEntity.body).toMatchObject({ code: 404, name: 'not_found_error' });
      const crossConnection = await send('DELETE', `${RULES}/${ofA.body.id}`, undefined, employer.accessToken);
      expect(crossConnection.status).toBe(404);
      expect((await list(token, `?entity_ids=${a}`)).body.responses).toHaveLength(1);
    });
  });

  describe('create and list', () => {
    it('creates a rule (201) in the spec’s shape, stamped by the service clock', async () => {
      const res = await create({ ...rule401k, effective_start_date: '2026-01-01', entity_type: 'pay_statement_item' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        priority: 1,
        created_at: '2026-06-01T12:00:00.000Z',
        updated_at: '2026-06-01T12:00:00.000Z',
        effective_start_date: '2026-01-01',
        effective_end_date: null,
        conditions: rule401k.conditions,
        attributes: rule401k.attributes,
        entity_type: 'pay_statement_item',
      });
    });

    it('assigns the highest priority + 1 when none is given, and lists highest first in { responses }', async () => {
      const first = await create(rule401k);
      const second = await create(rule401k);
      const given = await create({ ...rule401k, priority: 10 });
      const next = await create(rule401k);
      expect([first.body.priority, second.body.priority, given.body.priority, next.body.priority]).toEqual([1, 2, 10, 11]);
      const res = await list();
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['responses']);
      expect(res.body.responses.map((r: { priority: number }) => r.priority)).toEqual([11, 10, 2, 1]);
      expect(res.body.responses[1]).toEqual(given.body);
    });

    it('gives concurrent creates distinct priorities', async () => {
      const created = await Promise.all(Array.from({ length: 6 }, () => create(rule401k)));
      expect(created.map((r) => r.status)).toEqual(Array(6).fill(201));
      expect(created.map((r) => r.body.priority).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('refuses a priority another rule of the entity holds (409)', async () => {
      const held = await create({ ...rule401k, priority: 5 });
      const clash = await create({ ...rule401k, priority: 5 });
      expect(clash.status).toBe(409);
      expect(clash.body).toMatchObject({ code: 409, name: 'conflict_error', service_code: 'priority_conflict' });
      expect(clash.body.message).toContain(held.body.id);
      expect((await list()).body.responses).toHaveLength(1);
    });

    it('lists nothing for an entity without rules', async () => {
      expect((await list()).body).toEqual({ responses: [] });
    });

    const valid = rule401k;
    it.each([
      ['no conditions', { attributes: valid.attributes }, 'conditions'],
      ['empty conditions', { ...valid, conditions: [] }, 'conditions'],
      ['eleven conditions', { ...valid, conditions: Array.from({ length: 11 }, () => valid.conditions[0]) }, 'conditions'],
      ['an unknown field', { ...valid, conditions: [{ field: 'amount', operator: 'equals', value: '1' }] }, 'conditions[0].field'],
      ['another operator', { ...valid, conditions: [{ field: 'name', operator: 'contains', value: '401' }] }, 'conditions[0].operator'],
      ['a non-string value', { ...valid, conditions: [{ field: 'name', operator: 'equals', value: 401 }] }, 'conditions[0].value'],
      ['an empty value', { ...valid, conditions: [{ field: 'name', operator: 'equals', value: '' }] }, 'conditions[0].value'],
      ['a NUL in a value', { ...valid, conditions: [{ field: 'name', operator: 'equals', value: 'a\u0000b' }] }, 'conditions[0].value'],
      ['a NUL in metadata', { ...valid, attributes: { metadata: { deep: [{ 'k\u0000': 1 }] } } }, "attributes.metadata.deep[0]: a field name's text must not contain U+0000"],
      [
        'an unknown category',
        { ...valid, conditions: [{ field: 'category', operator: 'equals', value: 'bonuses' }] },
        'conditions[0].value',
      ],
      [
        'one field twice',
        {
          ...valid,
          conditions: [
            { field: 'name', operator: 'equals', value: 'a' },
            { field: 'name', operator: 'equals', value: 'b' },
          ],
        },
        'conditions[1].field',
      ],
      [
        'an extra condition key',
        { ...valid, conditions: [{ ...valid.conditions[0], negate: true }] },
        'conditions[0].negate: unknown field',
      ],
      ['no attributes', { conditions: valid.conditions }, 'attributes'],
      ['no metadata', { ...valid, attributes: {} }, 'attributes.metadata'],
      ['array metadata', { ...valid, attributes: { metadata: ['a'] } }, 'attributes.metadata'],
      ['other attributes', { ...valid, attributes: { metadata: {}, employer: true } }, 'attributes.employer: unknown field'],
      [
        'huge metadata',
        { ...valid, attributes: { metadata: { blob: 'x'.repeat(20_000) } } },
        'attributes.metadata: metadata must be at most 16384 bytes',
      ],
      ['a bad start date', { ...valid, effective_start_date: '2026-02-30' }, 'effective_start_date'],
      ['a date-time', { ...valid, effective_end_date: '2026-02-01T00:00:00Z' }, 'effective_end_date'],
      ['start after end', { ...valid, effective_start_date: '2026-03-01', effective_end_date: '2026-02-01' }, 'must not be after'],
      ['another entity type', { ...valid, entity_type: 'benefit' }, 'entity_type'],
      ['a negative priority', { ...valid, priority: -1 }, 'priority'],
      ['a fractional priority', { ...valid, priority: 1.5 }, 'priority'],
      ['a string priority', { ...valid, priority: '3' }, 'priority'],
      ['an unknown field', { ...valid, name: 'my rule' }, 'name: unknown field'],
    ])('refuses %s with 400 naming the field, storing nothing', async (_, body, field) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toContain(field);
      expect((await list()).body.responses).toEqual([]);
    });

    it('refuses a body that is not JSON', async () => {
      const res = await service.request(RULES, {
        method: 'POST',
        headers: { ...bearer(employer.accessToken), 'content-type': 'application/json' },
        body: '{"conditions": [',
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'bad_request_error', service_code: 'malformed_request' });
    });
  });

  describe('update', () => {
    it('replaces the fields given and keeps the others; null clears a date', async () => {
      const created = (await create({ ...rule401k, effective_start_date: '2026-01-01', effective_end_date: '2026-12-31' })).body;
      clock.advance(60_000);
      const res = await send('PUT', `${RULES}/${created.id}`, {
        attributes: { metadata: { gl_code: '4011' } },
        effective_end_date: null,
        priority: 4,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...created,
        priority: 4,
        attributes: { metadata: { gl_code: '4011' } },
        effective_end_date: null,
        updated_at: '2026-06-01T12:01:00.000Z',
      });
      expect((await list()).body.responses).toEqual([res.body]);
      const conditions = await send('PUT', `${RULES}/${created.id}`, {
        conditions: [{ field: 'name', operator: 'equals', value: 'Roth' }],
      });
      expect(conditions.body).toMatchObject({ conditions: [{ field: 'name', operator: 'equals', value: 'Roth' }], priority: 4 });
    });

    it('checks the date window against the dates the rule keeps', async () => {
      const created = (await create({ ...rule401k, effective_start_date: '2026-03-01' })).body;
      const res = await send('PUT', `${RULES}/${created.id}`, { effective_end_date: '2026-02-01' });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('must not be after effective_end_date');
      expect((await list()).body.responses[0]).toEqual(created);
    });

    it('refuses a priority held by another rule, but not its own', async () => {
      const one = (await create({ ...rule401k, priority: 1 })).body;
      const two = (await create({ ...rule401k, priority: 2 })).body;
      const clash = await send('PUT', `${RULES}/${two.id}`, { priority: 1 });
      expect(clash.status).toBe(409);
      const same = await send('PUT', `${RULES}/${two.id}`, { priority: 2 });
      expect(same.status).toBe(200);
      expect((await list()).body.responses.map((r: { id: string }) => r.id)).toEqual([two.id, one.id]);
    });

    it('answers 404 for an unknown rule and 400 for a malformed id or body', async () => {
      const unknown = await send('PUT', `${RULES}/${randomUUID()}`, { priority: 3 });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ code: 404, name: 'not_found_error', service_code: 'rule_not_found' });
      const malformed = await send('PUT', `${RULES}/rule-1`, { priority: 3 });
      expect(malformed.status).toBe(400);
      expect(malformed.body.message).toContain('rule_id must be a UUID');
      const created = (await create(rule401k)).body;
      const badBody = await send('PUT', `${RULES}/${created.id}`, { conditions: [{ field: 'amount', operator: 'equals', value: '1' }] });
      expect(badBody.status).toBe(400);
      expect(badBody.body.message).toContain('conditions[0].field');
    });
  });

  describe('delete', () => {
    it('answers the deleted rule with deleted_at, hides it, and frees its priority', async () => {
      const created = (await create({ ...rule401k, priority: 3 })).body;
      clock.advance(1_000);
      const res = await send('DELETE', `${RULES}/${created.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...created, deleted_at: clock.now().toISOString() });
      expect((await list()).body.responses).toEqual([]);
      expect((await send('DELETE', `${RULES}/${created.id}`)).status).toBe(404);
      expect((await send('PUT', `${RULES}/${created.id}`, { priority: 4 })).status).toBe(404);
      const again = await create({ ...rule401k, priority: 3 });
      expect(again.status).toBe(201);
      // "Highest + 1" counts live rules only.
      expect((await create(rule401k)).body.priority).toBe(4);
    });

    it('answers 404 for an unknown rule and 400 for a malformed id', async () => {
      const unknown = await send('DELETE', `${RULES}/${randomUUID()}`);
      expect(unknown.status).toBe(404);
      const malformed = await send('DELETE', `${RULES}/12345`);
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ name: 'invalid_request_error', message: expect.stringContaining('rule_id') });
    });
  });
});
