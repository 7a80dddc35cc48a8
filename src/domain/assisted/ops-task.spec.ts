import { dueStateOf } from './ops-task';

describe('dueStateOf', () => {
  const open = { status: 'open' as const, dueDate: '2026-07-07' };

  it('is on time before the due date, due today on it, overdue after', () => {
    expect(dueStateOf(open, '2026-07-02')).toBe('on_time');
    expect(dueStateOf(open, '2026-07-06')).toBe('on_time');
    expect(dueStateOf(open, '2026-07-07')).toBe('due_today');
    expect(dueStateOf(open, '2026-07-08')).toBe('overdue');
  });

  it('is null for a resolved task', () => {
    expect(dueStateOf({ ...open, status: 'completed' }, '2026-07-08')).toBeNull();
    expect(dueStateOf({ ...open, status: 'failed' }, '2026-07-01')).toBeNull();
  });
});
