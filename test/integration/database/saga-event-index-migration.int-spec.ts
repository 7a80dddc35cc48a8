import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { OneSagaEventIndex1798510000000 } from '../../../src/infrastructure/database/migrations/1798510000000-one-saga-event-index';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

/**
 * Migration 1798510000000: an HRIS saga's event has one index, unique by (lower(event id),
 * connection, type), which also serves the ops lookup by event id alone; down gives the two back.
 */
describeWithPostgres('migration: one index for a saga\'s event', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(3));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const connection = randomUUID();
  const saga = (connectionId: string, eventId: string, type = 'new_hire') =>
    dataSource.query(`INSERT INTO sagas (id, type, state, connection_id, source_event_id, created_at, updated_at) VALUES ($1, $2, 'started', $3, $4, now(), now())`, [
      randomUUID(),
      type,
      connectionId,
      eventId,
    ]);
  const indexes = async () =>
    (await dataSource.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'sagas' AND indexdef LIKE '%source_event_id%' ORDER BY 1`)).map(
      (r: { indexname: string }) => r.indexname,
    );
  const lookupPlan = async (): Promise<string> => {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.query(`SET enable_seqscan = off`);
      const [{ 'QUERY PLAN': plan }] = await runner.query(`EXPLAIN (FORMAT JSON) SELECT id FROM sagas s WHERE lower(s.source_event_id) = lower($1)`, ['E-1']);
      return JSON.stringify(plan);
    } finally {
      await runner.query(`RESET enable_seqscan`);
      await runner.release();
    }
  };

  it('refuses a second saga of one event, connection and type whatever the case of its id, and finds it by id alone', async () => {
    expect(await indexes()).toEqual(['sagas_source_event_idx']);
    const event = `Evt-${randomUUID()}`;
    await saga(connection, event);
    await expect(saga(connection, event.toLowerCase())).rejects.toThrow(/sagas_source_event_idx/);
    await expect(saga(connection, event, 'termination')).resolves.toBeDefined();
    await expect(saga(randomUUID(), event)).resolves.toBeDefined();
    expect(await lookupPlan()).toMatch(/"Index Name":"sagas_source_event_idx"/);
  });

  it('gives the two indexes back on down, and one again on up', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      await new OneSagaEventIndex1798510000000().down(runner);
      expect(await indexes()).toEqual(['sagas_source_event_idx', 'sagas_source_event_lookup_idx']);
      expect(await lookupPlan()).toMatch(/"Index Name":"sagas_source_event_lookup_idx"/);
      await new OneSagaEventIndex1798510000000().up(runner);
      expect(await indexes()).toEqual(['sagas_source_event_idx']);
    } finally {
      await runner.release();
    }
  });
});
