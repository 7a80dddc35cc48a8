import { TableActivity, upkeepDue } from './table-upkeep';

const quiet = (table: string, liveRows: number): TableActivity => ({ table, liveRows, deadRows: 0, insertedSinceVacuum: 0, modifiedSinceAnalyze: 0 });

describe('upkeepDue', () => {
  it('leaves quiet tables alone', () => {
    expect(upkeepDue([quiet('jobs', 0), quiet('sagas', 1_000_000)])).toEqual([]);
  });

  it('vacuums a table past 1,000 dead rows and 1 % of its live ones', () => {
    expect(upkeepDue([{ ...quiet('jobs', 10_000), deadRows: 1_100 }])).toEqual([]);
    expect(upkeepDue([{ ...quiet('jobs', 10_000), deadRows: 1_101 }])).toEqual([{ table: 'jobs', action: 'vacuum' }]);
    expect(upkeepDue([{ ...quiet('jobs', 1_000_000), deadRows: 10_999 }])).toEqual([]);
  });

  it('vacuums a table that only grows, past 5,000 inserted rows and 2 % of its live ones', () => {
    expect(upkeepDue([{ ...quiet('inbox_messages', 50_000), insertedSinceVacuum: 6_000 }])).toEqual([]);
    expect(upkeepDue([{ ...quiet('inbox_messages', 50_000), insertedSinceVacuum: 6_001 }])).toEqual([{ table: 'inbox_messages', action: 'vacuum' }]);
  });

  it('analyzes a table whose rows changed past 50 and 2 % since its statistics, when it needs no vacuum', () => {
    expect(upkeepDue([{ ...quiet('sagas', 10_000), modifiedSinceAnalyze: 250 }])).toEqual([]);
    expect(upkeepDue([{ ...quiet('sagas', 10_000), modifiedSinceAnalyze: 251 }])).toEqual([{ table: 'sagas', action: 'analyze' }]);
    // A table never analyzed, filled since: its statistics are taken at once.
    expect(upkeepDue([{ ...quiet('saga_jobs', 0), modifiedSinceAnalyze: 51 }])).toEqual([{ table: 'saga_jobs', action: 'analyze' }]);
  });

  it('answers each table once, the vacuum (which analyzes too) over the analyze', () => {
    const due = upkeepDue([
      { ...quiet('jobs', 0), deadRows: 5_000, modifiedSinceAnalyze: 5_000 },
      { ...quiet('sagas', 0), modifiedSinceAnalyze: 100 },
      quiet('outbox_lanes', 64),
    ]);
    expect(due).toEqual([
      { table: 'jobs', action: 'vacuum' },
      { table: 'sagas', action: 'analyze' },
    ]);
  });
});
