import { DataSource, QueryRunner } from 'typeorm';
import { EnrollmentWritePath1797100000000 } from '../../../src/infrastructure/database/migrations/1797100000000-enrollment-write-path';
import { OutboxBodiesAsJson1797400000000 } from '../../../src/infrastructure/database/migrations/1797400000000-outbox-bodies-as-json';
import { QueueRowsWithoutForeignKeys1797500000000 } from '../../../src/infrastructure/database/migrations/1797500000000-queue-rows-without-foreign-keys';
import { OutboxPendingQueue1797600000000 } from '../../../src/infrastructure/database/migrations/1797600000000-outbox-pending-queue';
import { JobLeaseFunction1797700000000 } from '../../../src/infrastructure/database/migrations/1797700000000-job-lease-function';
import { JobWeights1797950000000 } from '../../../src/infrastructure/database/migrations/1797950000000-job-weights';
import { JobQueue1798300000000 } from '../../../src/infrastructure/database/migrations/1798300000000-job-queue';
import { DailyPartitions1798400000000 } from '../../../src/infrastructure/database/migrations/1798400000000-daily-partitions';
import { InboxClaimSentAfter1798700000000 } from '../../../src/infrastructure/database/migrations/1798700000000-inbox-claim-sent-after';
import { OutboxBatches1798500000000 } from '../../../src/infrastructure/database/migrations/1798500000000-outbox-batches';
import {
  DOCUMENT_COLUMNS,
  QueueDocumentsWithoutStatistics1797800000000,
} from '../../../src/infrastructure/database/migrations/1797800000000-queue-documents-without-statistics';
import {
  LATER_DOCUMENT_COLUMNS,
  LaterDocumentsWithoutStatistics1798840000000,
} from '../../../src/infrastructure/database/migrations/1798840000000-later-documents-without-statistics';
import {
  QueueTablesSampledLightly1798910000000,
  SAMPLED_LIGHTLY_TARGET,
} from '../../../src/infrastructure/database/migrations/1798910000000-queue-tables-sampled-lightly';
import { GrownTablesAnalyzedLessOften1798960000000 } from '../../../src/infrastructure/database/migrations/1798960000000-grown-tables-analyzed-less-often';
import { thresholdsOf } from '../../../src/infrastructure/database/table-upkeep';
import { describeWithPostgres } from '../../setup/test-env';
import { createConnection } from '../sync/sync-test-kit';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

/** The migrations that lightened the HRIS write path: each one's schema after it, and its down step. */
describeWithPostgres('migrations of the write path', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(1));
    // These migrations knew the outbox as a table of messages: the schema goes back before its batches.
    const runner = dataSource.createQueryRunner();
    await new OutboxBatches1798500000000().down(runner).finally(() => runner.release());
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  // Through a runner: the data source has one connection, which the runner holds.
  const withRunner = async (work: (runner: QueryRunner) => Promise<void>): Promise<void> => {
    const runner = dataSource.createQueryRunner();
    try {
      await work(runner);
    } finally {
      await runner.release();
    }
  };
  const foreignKeys = async (runner: QueryRunner, tables: string[]): Promise<string[]> =>
    (
      await runner.query(`SELECT conname FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text = ANY($1::text[]) ORDER BY conname`, [tables])
    ).map((r: { conname: string }) => r.conname);

  it('1797100000000 keeps only the benefit key of enrollment rows, and its down step restores the others', () =>
    withRunner(async (runner) => {
      const migration = new EnrollmentWritePath1797100000000();
      const tables = ['enrollments', 'enrollment_items'];
      expect(await foreignKeys(runner, tables)).toEqual(['enrollments_benefit_id_fkey']);
      await migration.down(runner);
      expect(await foreignKeys(runner, tables)).toEqual(['enrollment_items_group_id_fkey', 'enrollments_benefit_id_fkey', 'enrollments_entity_id_fkey', 'enrollments_job_id_fkey']);
      await migration.up(runner);
      expect(await foreignKeys(runner, tables)).toEqual(['enrollments_benefit_id_fkey']);
    }));

  it('1797500000000 leaves no foreign key on the rows each HRIS event writes, and its down step restores them', () =>
    withRunner(async (runner) => {
      const migration = new QueueRowsWithoutForeignKeys1797500000000();
      const tables = ['jobs', 'sagas', 'saga_jobs', 'enrollment_groups'];
      expect(await foreignKeys(runner, tables)).toEqual([]);
      await migration.down(runner);
      expect(await foreignKeys(runner, tables)).toEqual([
        'enrollment_groups_benefit_id_fkey',
        'enrollment_groups_job_id_fkey',
        'jobs_connection_id_fkey',
        'jobs_entity_id_fkey',
        'saga_jobs_job_id_fkey',
        'saga_jobs_saga_id_fkey',
        'sagas_connection_id_fkey',
      ]);
      // The saga's steps went with it: the down step restores the cascade too.
      expect(
        (await runner.query(`SELECT confdeltype FROM pg_constraint WHERE conname = 'saga_jobs_saga_id_fkey'`)).map((r: { confdeltype: string }) => r.confdeltype),
      ).toEqual(['c']);
      await migration.up(runner);
      expect(await foreignKeys(runner, tables)).toEqual([]);
    }));

  it('1797400000000 stores outbox payloads and headers as json, keeps the messages written before, and its down step restores jsonb', () =>
    withRunner(async (runner) => {
      const migration = new OutboxBodiesAsJson1797400000000();
      const columns = async (): Promise<Record<string, string>> =>
        Object.fromEntries(
          (
            await runner.query(
              `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'outbox_messages' AND column_name IN ('payload', 'headers')`,
            )
          ).map((r: { column_name: string; data_type: string }) => [r.column_name, r.data_type]),
        );
      const insert = (key: string, payload: string) =>
        runner.query(`INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload) VALUES (gen_random_uuid(), 't', $1, 0, 'T', $2)`, [key, payload]);

      expect(await columns()).toEqual({ payload: 'json', headers: 'json' });
      await migration.down(runner);
      expect(await columns()).toEqual({ payload: 'jsonb', headers: 'jsonb' });
      await insert('migrated', '{"b": [1, 2], "a": "x"}');
      await migration.up(runner);
      expect(await columns()).toEqual({ payload: 'json', headers: 'json' });
      expect(await runner.query(`SELECT payload, headers FROM outbox_messages WHERE message_key = 'migrated'`)).toEqual([{ payload: { a: 'x', b: [1, 2] }, headers: {} }]);
      // A message written without headers still gets an empty object.
      await insert('fresh', '{}');
      expect(await runner.query(`SELECT headers::text FROM outbox_messages WHERE message_key = 'fresh'`)).toEqual([{ headers: '{}' }]);
    }));

  it('1797600000000 moves what is left to publish to outbox_pending, with its attempts, and its down step marks the rest published', () =>
    withRunner(async (runner) => {
      const migration = new OutboxPendingQueue1797600000000();
      // The outbox as this migration knew it: one plain table, not yet partitioned by day (1798400000000).
      const partitioned = new DailyPartitions1798400000000();
      // Its inbox_claim() is the later migration's, taken back first.
      await new InboxClaimSentAfter1798700000000().down(runner);
      await partitioned.down(runner);
      const insert = (key: string) =>
        runner.query(`INSERT INTO outbox_messages (message_id, topic, message_key, lane, type, payload) VALUES (gen_random_uuid(), 't', $1, 7, 'T', '{}') RETURNING id`, [key]);
      await runner.query(`DELETE FROM outbox_pending`);
      await runner.query(`DELETE FROM outbox_messages`);
      await insert('sent');
      const [failing] = await insert('failing');
      await runner.query(`INSERT INTO outbox_pending (lane, id, attempts, last_error) VALUES (7, $1, 2, 'broker down')`, [failing.id]);

      await migration.down(runner);
      expect(await runner.query(`SELECT message_key, published_at IS NOT NULL AS published, attempts, last_error FROM outbox_messages ORDER BY id`)).toEqual([
        { message_key: 'sent', published: true, attempts: 1, last_error: null },
        { message_key: 'failing', published: false, attempts: 2, last_error: 'broker down' },
      ]);
      expect(await runner.query(`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'outbox_pending'`)).toEqual([{ n: 0 }]);
      await runner.query(`UPDATE outbox_messages SET attempts = 3 WHERE message_key = 'failing'`);

      await migration.up(runner);
      expect(await runner.query(`SELECT lane, id, attempts, last_error FROM outbox_pending`)).toEqual([{ lane: 7, id: failing.id, attempts: 3, last_error: 'broker down' }]);
      expect(
        (await runner.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'outbox_messages' ORDER BY column_name`)).map(
          (r: { column_name: string }) => r.column_name,
        ),
      ).toEqual(['created_at', 'headers', 'id', 'lane', 'message_id', 'message_key', 'payload', 'topic', 'type']);
      await partitioned.up(runner);
    }));

  const leaseFunctions = async (runner: QueryRunner) =>
    (await runner.query(`SELECT pronargs, proconfig FROM pg_proc WHERE proname = 'lease_jobs'`)).map((r: { pronargs: number; proconfig: string[] }) => [
      r.pronargs,
      r.proconfig,
    ]);

  it('1797700000000 leases through a function held to its generic plan, and its down step drops it', () =>
    withRunner(async (runner) => {
      // The function as 1797700000000 made it: before 1797950000000 gave it weights (and 1798300000000 a queue of its own).
      const queue = new JobQueue1798300000000();
      await queue.down(runner);
      const weights = new JobWeights1797950000000();
      await weights.down(runner);
      const migration = new JobLeaseFunction1797700000000();
      expect(await leaseFunctions(runner)).toEqual([[6, ['plan_cache_mode=force_generic_plan']]]);
      await migration.down(runner);
      expect(await leaseFunctions(runner)).toEqual([]);
      await migration.up(runner);
      expect(await leaseFunctions(runner)).toEqual([[6, ['plan_cache_mode=force_generic_plan']]]);
      await weights.up(runner);
      await queue.up(runner);
    }));

  it('1797950000000 gives jobs a weight (1 for jobs written before) and leases by it, held to the generic plan; its down step takes both back', async () => {
    const connection = await createConnection(dataSource);
    await withRunner(async (runner) => {
      const queue = new JobQueue1798300000000();
      await queue.down(runner);
      const migration = new JobWeights1797950000000();
      const weightColumn = async () =>
        (await runner.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'jobs' AND column_name = 'weight'`)).length;
      await migration.down(runner);
      expect([await weightColumn(), await leaseFunctions(runner)]).toEqual([0, [[6, ['plan_cache_mode=force_generic_plan']]]]);
      const [before] = await runner.query(
        `INSERT INTO jobs (id, connection_id, kind, type, status, created_at, scheduled_at) VALUES (gen_random_uuid(), $1, 'internal', 'weights_test', 'pending', now(), now()) RETURNING id`,
        [connection.id],
      );
      await migration.up(runner);
      expect([await weightColumn(), await leaseFunctions(runner)]).toEqual([1, [[8, ['plan_cache_mode=force_generic_plan']]]]);
      expect(await runner.query(`SELECT weight FROM jobs WHERE id = $1`, [before.id])).toEqual([{ weight: 1 }]);
      await expect(runner.query(`UPDATE jobs SET weight = 0 WHERE id = $1`, [before.id])).rejects.toThrow(/check constraint/);
      await queue.up(runner);
    });
  });

  it('1798300000000 moves open jobs\' leases to job_queue and back, and keeps one open sync per connection', async () => {
    const connection = await createConnection(dataSource);
    await withRunner(async (runner) => {
      const migration = new JobQueue1798300000000();
      await migration.down(runner);
      const insert = (type: string, status: string, kind = 'internal') =>
        runner.query(
          `INSERT INTO jobs (id, connection_id, kind, type, status, created_at, scheduled_at, leased_by, leased_until)
           VALUES (gen_random_uuid(), $1, $2, $3, $4, now(), now(), CASE WHEN $4 = 'in_progress' THEN 'w1' END, CASE WHEN $4 = 'in_progress' THEN now() END)
           RETURNING id`,
          [connection.id, kind, type, status],
        );
      const [[running], [waiting], [done], [manual]] = [
        await insert('queue_probe', 'in_progress'),
        await insert('data_sync_all', 'pending', 'automated'),
        await insert('queue_probe', 'complete'),
        await insert('queue_probe', 'pending', 'manual'),
      ];
      await migration.up(runner);
      const queued = await runner.query(`SELECT job_id, leased_by FROM job_queue WHERE job_id = ANY($1::uuid[]) ORDER BY leased_by NULLS LAST`, [
        [running.id, waiting.id, done.id, manual.id],
      ]);
      expect(queued).toEqual([
        { job_id: running.id, leased_by: 'w1' },
        { job_id: waiting.id, leased_by: null },
      ]);
      await expect(
        runner.query(`INSERT INTO job_queue (job_id, type, connection_id, scheduled_at, seq, weight) VALUES (gen_random_uuid(), 'data_sync_all', $1, now(), 0, 1)`, [
          connection.id,
        ]),
      ).rejects.toThrow(/jobs_one_open_sync_idx/);
      await migration.down(runner);
      expect(await runner.query(`SELECT leased_by FROM jobs WHERE id = $1`, [running.id])).toEqual([{ leased_by: 'w1' }]);
      await runner.query(`DELETE FROM jobs WHERE id = ANY($1::uuid[])`, [[running.id, waiting.id, done.id, manual.id]]);
      await migration.up(runner);
    });
  });

  /**
   * The statistics targets of every JSON column of these columns' tables (`table.column=target`),
   * and what they are when exactly the columns named have `target`.
   */
  const statisticsTargets = (runner: QueryRunner, columns: readonly (readonly [string, string])[]) => ({
    targets: async () =>
      (
        await runner.query(
          `SELECT a.attrelid::regclass::text AS table, a.attname AS column, a.attstattarget AS target FROM pg_attribute a
           WHERE a.attrelid::regclass::text = ANY($1::text[]) AND a.atttypid IN ('json'::regtype, 'jsonb'::regtype) AND NOT a.attisdropped
           ORDER BY 1, 2`,
          [[...new Set(columns.map(([table]) => table))]],
        )
      ).map((r: { table: string; column: string; target: number }) => `${r.table}.${r.column}=${r.target}`),
    every: (target: number) => columns.map(([table, column]) => `${table}.${column}=${target}`).sort(),
  });

  it('1797800000000 leaves the queue tables\' JSON documents out of ANALYZE, and its down step takes them back', async () => {
    const connection = await createConnection(dataSource);
    await withRunner(async (runner) => {
      const migration = new QueueDocumentsWithoutStatistics1797800000000();
      const { targets, every } = statisticsTargets(runner, DOCUMENT_COLUMNS);
      // Every JSON column of these tables is listed: none is left with statistics.
      expect(await targets()).toEqual(every(0));
      await runner.query(
        `INSERT INTO jobs (id, connection_id, kind, type, status, params, result, created_at, scheduled_at)
         SELECT gen_random_uuid(), $1, 'internal', 'stats_probe', 'complete', jsonb_build_object('n', g), jsonb_build_object('n', g), now(), now()
         FROM generate_series(1, 50) g`,
        [connection.id],
      );
      await runner.query(`ANALYZE jobs`);
      const analyzed = async () =>
        (await runner.query(`SELECT attname FROM pg_stats WHERE tablename = 'jobs' AND attname IN ('type', 'params', 'result') ORDER BY attname`)).map(
          (r: { attname: string }) => r.attname,
        );
      expect(await analyzed()).toEqual(['type']);
      await migration.down(runner);
      expect(await targets()).toEqual(every(-1));
      await runner.query(`ANALYZE jobs`);
      expect(await analyzed()).toEqual(['params', 'result', 'type']);
      await runner.query(`DELETE FROM jobs WHERE type = 'stats_probe'`);
      await migration.up(runner);
      expect(await targets()).toEqual(every(0));
    });
  });

  it('1798840000000 leaves the JSON documents added since out of ANALYZE too, and its down step takes them back', async () => {
    await withRunner(async (runner) => {
      const migration = new LaterDocumentsWithoutStatistics1798840000000();
      const { targets, every } = statisticsTargets(runner, LATER_DOCUMENT_COLUMNS);
      // Every JSON column of these tables is listed: none is left with statistics.
      expect(await targets()).toEqual(every(0));
      await runner.query(`INSERT INTO saga_jobs (saga_id, job_id, status, individual_ids) SELECT gen_random_uuid(), gen_random_uuid(), 'waiting', jsonb_build_array(g) FROM generate_series(1, 50) g`);
      await runner.query(`ANALYZE saga_jobs`);
      const analyzed = async () =>
        (await runner.query(`SELECT attname FROM pg_stats WHERE tablename = 'saga_jobs' AND attname IN ('status', 'individual_ids') ORDER BY attname`)).map(
          (r: { attname: string }) => r.attname,
        );
      expect(await analyzed()).toEqual(['status']);
      await migration.down(runner);
      expect(await targets()).toEqual(every(-1));
      await runner.query(`ANALYZE saga_jobs`);
      expect(await analyzed()).toEqual(['individual_ids', 'status']);
      await runner.query(`DELETE FROM saga_jobs WHERE individual_ids IS NOT NULL AND status = 'waiting'`);
      await migration.up(runner);
      expect(await targets()).toEqual(every(0));
    });
  });

  it('1798910000000 samples the tables that grow with every event lightly: every column with statistics and the event index\'s expression, and its down step takes them back', async () => {
    await withRunner(async (runner) => {
      const migration = new QueueTablesSampledLightly1798910000000();
      // Each column of these tables, and each expression of their indexes, with its target (-1: the server's default).
      const targets = async (): Promise<Record<string, number>> =>
        Object.fromEntries(
          (
            await runner.query(
              `SELECT c.relname || '.' || a.attname AS name, coalesce(a.attstattarget, -1) AS target
               FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
               WHERE c.relname IN ('sagas', 'saga_jobs', 'enrollment_items') AND a.attnum > 0 AND NOT a.attisdropped
               UNION ALL
               SELECT c.relname || '.' || a.attnum, coalesce(a.attstattarget, -1)
               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_attribute a ON a.attrelid = i.indexrelid
               WHERE i.indrelid IN ('sagas'::regclass, 'saga_jobs'::regclass, 'enrollment_items'::regclass) AND i.indkey[a.attnum - 1] = 0`,
            )
          ).map((r: { name: string; target: number }) => [r.name, Number(r.target)]),
        );
      const documents = ['sagas.steps', 'saga_jobs.individual_ids', 'enrollment_items.configuration'];
      const before = await targets();
      // None left at the default: a column at 100 would keep ANALYZE's whole sample.
      for (const [name, target] of Object.entries(before)) expect([name, target]).toEqual([name, documents.includes(name) ? 0 : SAMPLED_LIGHTLY_TARGET]);
      expect(before['sagas_source_event_idx.1']).toBe(SAMPLED_LIGHTLY_TARGET);

      // What the planner keeps of 5,000 distinct job ids: ten buckets, then the server's default once taken back.
      await runner.query(`INSERT INTO saga_jobs (saga_id, job_id, status) SELECT gen_random_uuid(), gen_random_uuid(), 'pending' FROM generate_series(1, 5000)`);
      const bucketsAfterAnalyze = async (): Promise<number> => {
        await runner.query(`ANALYZE saga_jobs`);
        const [row] = await runner.query(`SELECT array_length(histogram_bounds::text::text[], 1) AS bounds FROM pg_stats WHERE tablename = 'saga_jobs' AND attname = 'job_id'`);
        return Number(row.bounds) - 1;
      };
      expect(await bucketsAfterAnalyze()).toBe(SAMPLED_LIGHTLY_TARGET);
      await migration.down(runner);
      const after = await targets();
      for (const [name, target] of Object.entries(after)) expect([name, target]).toEqual([name, documents.includes(name) ? 0 : -1]);
      const [{ server }] = await runner.query(`SELECT current_setting('default_statistics_target')::int AS server`);
      expect(await bucketsAfterAnalyze()).toBe(server);
      await runner.query(`DELETE FROM saga_jobs WHERE status = 'pending' AND individual_ids IS NULL`);
      await migration.up(runner);
      expect(await targets()).toEqual(before);
    });
  });

  it('1798960000000 analyzes the tables read by key after 10 % of change, their vacuum settings kept; its down step takes them back to 2 %', async () => {
    await withRunner(async (runner) => {
      const tables = ['sagas', 'saga_jobs', 'enrollment_items'];
      const options = async (): Promise<Record<string, string[]>> =>
        Object.fromEntries(
          (await runner.query(`SELECT relname, reloptions FROM pg_class WHERE relname = ANY($1::text[])`, [tables])).map((r: { relname: string; reloptions: string[] }) => [
            r.relname,
            [...r.reloptions].sort(),
          ]),
        );
      const server = { autovacuum_analyze_threshold: '50', autovacuum_analyze_scale_factor: '0.1', autovacuum_vacuum_threshold: '50', autovacuum_vacuum_scale_factor: '0.2' };
      const after = await options();
      for (const table of tables) {
        expect(after[table]).toContain('autovacuum_analyze_scale_factor=0.1');
        expect(after[table]).toContain('autovacuum_vacuum_scale_factor=0.01');
        // What the table upkeep reads of it, where autovacuum is off.
        expect(thresholdsOf(server, after[table])!.analyze).toEqual({ rows: 50, share: 0.1 });
        // Its vacuums still come at 1 % of change, not at the server's 20 %.
        expect(thresholdsOf(server, after[table])!.vacuum.share).toBe(0.01);
      }
      await new GrownTablesAnalyzedLessOften1798960000000().down(runner);
      const before = await options();
      for (const table of tables) {
        expect(before[table]).toEqual(after[table].map((o) => (o === 'autovacuum_analyze_scale_factor=0.1' ? 'autovacuum_analyze_scale_factor=0.02' : o)).sort());
      }
      await new GrownTablesAnalyzedLessOften1798960000000().up(runner);
      expect(await options()).toEqual(after);
    });
  });
});
