import { affectedCount, returnedRows } from './query-result';

describe('reading what TypeORM answers for a statement', () => {
  describe('an UPDATE or DELETE: [rows, count]', () => {
    it('gives the count and the rows returned', () => {
      const answer = [[{ id: 'a' }, { id: 'b' }], 2];
      expect(affectedCount(answer)).toBe(2);
      expect(returnedRows<{ id: string }>(answer)).toEqual([{ id: 'a' }, { id: 'b' }]);
    });

    it('counts the rows changed even without RETURNING', () => {
      expect(affectedCount([[], 3])).toBe(3);
      expect(returnedRows([[], 3])).toEqual([]);
    });

    it('gives zero and no rows when nothing matched', () => {
      expect(affectedCount([[], 0])).toBe(0);
      expect(returnedRows([[], 0])).toEqual([]);
    });
  });

  describe('any other statement: the rows alone', () => {
    it('gives the rows as they are', () => {
      expect(returnedRows([{ id: 'a' }, { id: 'b' }])).toEqual([{ id: 'a' }, { id: 'b' }]);
      expect(returnedRows([])).toEqual([]);
    });

    it('counts nothing: only UPDATE and DELETE answers carry a count', () => {
      expect(affectedCount([{ id: 'a' }, { id: 'b' }])).toBe(0);
    });
  });

  it('reads nothing from an answer of no known shape', () => {
    for (const answer of [undefined, null, 1, 'UPDATE 1', { rows: [], rowCount: 1 }]) {
      expect(affectedCount(answer)).toBe(0);
      expect(returnedRows(answer)).toEqual([]);
    }
  });
});
