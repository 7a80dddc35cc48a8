import { STATISTICS_ROWS, TableActivity, thresholdsOf, UpkeepThresholds, upkeepDue } from './table-upkeep';

/** PostgreSQL's defaults. */
const SERVER = {
  autovacuum_vacuum_threshold: '50',
  autovacuum_vacuum_scale_factor: '0.2',
  autovacuum_vacuum_insert_threshold: '1000',
  autovacuum_vacuum_insert_scale_factor: '0.2',
  autovacuum_analyze_threshold: '50',
  autovacuum_analyze_scale_factor: '0.1',
  autovacuum_vacuum_cost_delay: '2',
  autovacuum_vacuum_cost_limit: '-1',
  vacuum_cost_delay: '0',
  vacuum_cost_limit: '200',
};

/** What migration 1796300000000 sets on the queue tables. */
const QUEUE_OPTIONS = [
  'autovacuum_vacuum_scale_factor=0.01',
  'autovacuum_vacuum_threshold=1000',
  'autovacuum_vacuum_insert_scale_factor=0.02',
  'autovacuum_vacuum_insert_threshold=5000',
  'autovacuum_analyze_scale_factor=0.02',
  'autovacuum_vacuum_cost_limit=2000',
  'fillfactor=80',
];

describe('thresholdsOf', () => {
  it("takes the server's settings for a table without its own", () => {
    expect(thresholdsOf(SERVER, null)).toEqual({
      vacuum: { rows: 50, share: 0.2 },
      vacuumInserts: { rows: 1000, share: 0.2 },
      analyze: { rows: 50, share: 0.1 },
      pace: { delayMs: 2, costLimit: 200 },
    });
  });

  it("lets a table's storage parameters override them one by one", () => {
    expect(thresholdsOf(SERVER, QUEUE_OPTIONS)).toEqual({
      vacuum: { rows: 1000, share: 0.01 },
      vacuumInserts: { rows: 5000, share: 0.02 },
      analyze: { rows: 50, share: 0.02 },
      pace: { delayMs: 2, costLimit: 2000 },
    });
  });

  it("paces the work as autovacuum would: its own cost settings, the manual VACUUM's where they are -1", () => {
    expect(thresholdsOf({ ...SERVER, autovacuum_vacuum_cost_delay: '-1', vacuum_cost_delay: '7' }, null)?.pace).toEqual({ delayMs: 7, costLimit: 200 });
    expect(thresholdsOf({ ...SERVER, autovacuum_vacuum_cost_limit: '500' }, null)?.pace).toEqual({ delayMs: 2, costLimit: 500 });
    expect(thresholdsOf(SERVER, ['autovacuum_vacuum_cost_delay=10', 'autovacuum_vacuum_cost_limit=50'])?.pace).toEqual({ delayMs: 10, costLimit: 50 });
  });

  it('turns insert vacuums off at -1, and the table off with autovacuum_enabled=false', () => {
    expect(thresholdsOf(SERVER, ['autovacuum_vacuum_insert_threshold=-1'])?.vacuumInserts).toBeNull();
    expect(thresholdsOf(SERVER, ['autovacuum_enabled=false', 'fillfactor=80'])).toBeUndefined();
    expect(thresholdsOf(SERVER, ['autovacuum_enabled=true'])).toBeDefined();
  });
});

describe('upkeepDue', () => {
  const queue = thresholdsOf(SERVER, QUEUE_OPTIONS)!;
  const quiet = (table: string, liveRows: number, thresholds: UpkeepThresholds = queue): TableActivity => ({
    table,
    liveRows,
    deadRows: 0,
    insertedSinceVacuum: 0,
    modifiedSinceAnalyze: 0,
    analyzed: true,
    statisticsRows: liveRows,
    thresholds,
  });

  it('leaves quiet tables alone', () => {
    expect(upkeepDue([quiet('jobs', 0), quiet('sagas', 1_000_000)])).toEqual([]);
  });

  it('vacuums a table past its dead-row threshold: rows plus a share of the live ones', () => {
    expect(upkeepDue([{ ...quiet('jobs', 10_000), deadRows: 1_100 }])).toEqual([]);
    expect(upkeepDue([{ ...quiet('jobs', 10_000), deadRows: 1_101 }])).toEqual([{ table: 'jobs', action: 'vacuum' }]);
    expect(upkeepDue([{ ...quiet('jobs', 1_000_000), deadRows: 10_999 }])).toEqual([]);
    // The server's defaults for a table with none of its own: 50 rows and 20 %.
    expect(upkeepDue([{ ...quiet('tokens', 1_000, thresholdsOf(SERVER, null)), deadRows: 251 }])).toEqual([{ table: 'tokens', action: 'vacuum' }]);
  });

  it('vacuums a table that only grows, past its inserted-row threshold, unless those vacuums are off', () => {
    expect(upkeepDue([{ ...quiet('inbox_messages', 50_000), insertedSinceVacuum: 6_000 }])).toEqual([]);
    expect(upkeepDue([{ ...quiet('inbox_messages', 50_000), insertedSinceVacuum: 6_001 }])).toEqual([{ table: 'inbox_messages', action: 'vacuum' }]);
    const noInserts = thresholdsOf(SERVER, ['autovacuum_vacuum_insert_threshold=-1'])!;
    expect(upkeepDue([{ ...quiet('log', 0, noInserts), insertedSinceVacuum: 1_000_000 }])).toEqual([]);
  });

  it('analyzes a table whose rows changed past its analyze threshold, when it needs no vacuum', () => {
    expect(upkeepDue([{ ...quiet('sagas', 10_000), modifiedSinceAnalyze: 250 }])).toEqual([]);
    expect(upkeepDue([{ ...quiet('sagas', 10_000), modifiedSinceAnalyze: 251 }])).toEqual([{ table: 'sagas', action: 'analyze' }]);
    // A table never analyzed, filled since: its statistics are taken at once.
    expect(upkeepDue([{ ...quiet('saga_jobs', 0), modifiedSinceAnalyze: 51 }])).toEqual([{ table: 'saga_jobs', action: 'analyze' }]);
  });

  it('gives a table without statistics its first ones once enough of its rows changed, in either scope', () => {
    const unanalyzed = (modifiedSinceAnalyze: number): TableActivity => ({ ...quiet('saga_jobs', modifiedSinceAnalyze), modifiedSinceAnalyze, analyzed: false, statisticsRows: -1 });
    expect(upkeepDue([unanalyzed(STATISTICS_ROWS - 1)], 'statistics')).toEqual([]);
    expect(upkeepDue([unanalyzed(STATISTICS_ROWS)], 'statistics')).toEqual([{ table: 'saga_jobs', action: 'analyze' }]);
    // Past its analyze threshold too (50 rows and 2 %): the same one analyze.
    expect(upkeepDue([unanalyzed(STATISTICS_ROWS)], 'all')).toEqual([{ table: 'saga_jobs', action: 'analyze' }]);
  });

  it('analyzes a table again once it grew by as many rows as its statistics counted, and at least STATISTICS_ROWS', () => {
    const grown = (statisticsRows: number, addedRows: number): TableActivity => ({
      ...quiet('sagas', statisticsRows + addedRows),
      statisticsRows,
      modifiedSinceAnalyze: addedRows,
    });
    expect(upkeepDue([grown(40_000, 39_999)], 'statistics')).toEqual([]);
    expect(upkeepDue([grown(40_000, 40_000)], 'statistics')).toEqual([{ table: 'sagas', action: 'analyze' }]);
    // Statistics of a table nearly empty: still STATISTICS_ROWS more rows first.
    expect(upkeepDue([grown(10, STATISTICS_ROWS - 1)], 'statistics')).toEqual([]);
    expect(upkeepDue([grown(10, STATISTICS_ROWS)], 'statistics')).toEqual([{ table: 'sagas', action: 'analyze' }]);
  });

  it('does not take changes that leave a table its size for growth: rows that come and go, rows updated in place', () => {
    // A queue whose rows are inserted and deleted: 50,000 changes, the same 200 rows or so.
    const churned: TableActivity = { ...quiet('job_queue', 200), statisticsRows: 180, modifiedSinceAnalyze: 50_000 };
    expect(upkeepDue([churned], 'statistics')).toEqual([]);
    // Updated in place ten times over.
    const updated: TableActivity = { ...quiet('enrollments', 5_000), modifiedSinceAnalyze: 50_000 };
    expect(upkeepDue([updated], 'statistics')).toEqual([]);
    // Their analyze thresholds still hold in a full round (where autovacuum does not run).
    expect(upkeepDue([churned], 'all')).toEqual([{ table: 'job_queue', action: 'analyze' }]);
    expect(upkeepDue([updated], 'all')).toEqual([{ table: 'enrollments', action: 'analyze' }]);
  });

  it('leaves vacuums and the finer analyzes to autovacuum when only statistics are asked for', () => {
    const busy: TableActivity = { ...quiet('jobs', 100_000), deadRows: 50_000, insertedSinceVacuum: 50_000, modifiedSinceAnalyze: 50_000 };
    expect(upkeepDue([busy], 'all')).toEqual([{ table: 'jobs', action: 'vacuum' }]);
    expect(upkeepDue([busy], 'statistics')).toEqual([]);
    expect(upkeepDue([{ ...busy, analyzed: false, statisticsRows: -1 }], 'statistics')).toEqual([{ table: 'jobs', action: 'analyze' }]);
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
