export { templateDatabaseName } from './admin-client';

/** What test/run-tests.js found reachable; suites read the services through these helpers only. */
export const testEnv = {
  /** Admin URL of the PostgreSQL server the tests create their databases on. */
  get databaseUrl(): string | undefined {
    return process.env.TEST_DATABASE_URL || undefined;
  },
  get kafkaBrokers(): string | undefined {
    return process.env.TEST_KAFKA_BROKERS || undefined;
  },
  get runId(): string {
    const id = process.env.TEST_RUN_ID;
    if (!id) throw new Error('TEST_RUN_ID is unset: run the tests with `npm test` or jest (global setup sets it)');
    return id;
  },
};

/** `describe` when PostgreSQL is reachable, else skipped (never under CI: run-tests.js fails first). */
export const describeWithPostgres: jest.Describe = testEnv.databaseUrl ? describe : describe.skip;
export const describeWithKafka: jest.Describe =
  testEnv.databaseUrl && testEnv.kafkaBrokers ? describe : describe.skip;
