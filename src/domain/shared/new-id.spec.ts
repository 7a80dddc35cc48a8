import { newId } from './new-id';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newId', () => {
  it('makes version 7 UUIDs of the RFC 9562 variant', () => {
    for (let i = 0; i < 1_000; i++) expect(newId()).toMatch(UUID_V7);
  });

  it('starts with the creation time in milliseconds', () => {
    const at = Date.UTC(2026, 10, 28, 9, 30, 0, 123);
    const id = newId(at);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it('sorts by creation time across milliseconds, as text and as PostgreSQL compares uuids (bytewise)', () => {
    const ids = [0, 1, 2, 255, 256, 65_536, 1_790_000_000_000, 1_790_000_000_001].map((ms) => newId(ms));
    expect([...ids].sort()).toEqual(ids);
  });

  it('never repeats, within one millisecond nor across refills of its random pool', () => {
    const ids = Array.from({ length: 5_000 }, () => newId(1_790_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
