import { DomainError } from '../shared/domain-error';
import { ConnectionEntity, entityIdsFromQuery, resolveEntity } from './entity-scope';

const a: ConnectionEntity = { id: 'a', name: 'A', status: 'active' };
const b: ConnectionEntity = { id: 'b', name: 'B', status: 'active' };
const gone: ConnectionEntity = { id: 'c', name: 'C', status: 'disconnected' };

function failure(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('entityIdsFromQuery', () => {
  it.each([
    [{ entity_ids: 'a' }, ['a']],
    [{ 'entity_ids[]': 'a' }, ['a']],
    [{ entity_ids: ['a', 'b'] }, ['a', 'b']],
    [{ 'entity_ids[]': ['a', 'b'] }, ['a', 'b']],
    [{ entity_ids: 'a,b' }, ['a', 'b']],
    [{ entity_ids: ' a , ' }, ['a']],
    [{}, undefined],
  ])('reads %j', (query, expected) => {
    expect(entityIdsFromQuery(query)).toEqual(expected);
  });
});

describe('resolveEntity', () => {
  it('defaults to the only active entity', () => {
    expect(resolveEntity([a, gone], undefined)).toBe(a);
  });

  it('requires entity_ids when several entities are active', () => {
    const error = failure(() => resolveEntity([a, b], undefined));
    expect(error.family).toBe('invalid_request_error');
    expect(error.message).toMatch(/entity_ids is required/);
  });

  it('takes exactly one id', () => {
    expect(resolveEntity([a, b], ['b'])).toBe(b);
    expect(failure(() => resolveEntity([a, b], ['a', 'b'])).message).toMatch(/exactly one/);
    expect(failure(() => resolveEntity([a, b], [])).message).toMatch(/exactly one/);
  });

  it('refuses foreign and disconnected entities with 403 entity_not_authorized', () => {
    for (const id of ['zzz', 'c']) {
      const error = failure(() => resolveEntity([a, gone], [id]));
      expect(error.family).toBe('forbidden_error');
      expect(error.serviceCode).toBe('entity_not_authorized');
    }
  });
});
