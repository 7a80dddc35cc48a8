import { ConfigError, loadConfig } from './app-config';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('runs on the embedded default with no settings at all', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3000);
    expect(config.embedded).toBe(true);
    expect(config.kafkaEnabled).toBe(false);
  });

  it('reads numbers, booleans and lists from strings', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/benefits',
      OPS_PASSWORD: 'correct horse battery',
      KAFKA_BROKERS: 'k1:9092,k2:9092',
      WORKERS_ENABLED: 'false',
    });
    expect(config.PORT).toBe(8080);
    expect(config.embedded).toBe(false);
    expect(config.kafkaBrokers).toEqual(['k1:9092', 'k2:9092']);
    expect(config.WORKERS_ENABLED).toBe(false);
  });

  it('offers real Gusto connections only with both of the Gusto application\'s credentials; its server and version are settings', () => {
    expect(loadConfig({}).gustoConfigured).toBe(false);
    expect(loadConfig({ GUSTO_CLIENT_ID: 'id' }).gustoConfigured).toBe(false);
    const config = loadConfig({ GUSTO_CLIENT_ID: 'id', GUSTO_CLIENT_SECRET: 'secret', GUSTO_BASE_URL: 'https://api.gusto.com' });
    expect([config.gustoConfigured, config.GUSTO_BASE_URL, config.GUSTO_API_VERSION]).toEqual([true, 'https://api.gusto.com', '2026-02-01']);
    expect(() => loadConfig({ GUSTO_BASE_URL: 'api.gusto.com', GUSTO_API_VERSION: 'latest' })).toThrow(
      /GUSTO_BASE_URL must be an http\(s\) URL[\s\S]*GUSTO_API_VERSION must be a date/,
    );
  });

  it('names every bad setting at once', () => {
    const problems = problemsOf({ PORT: 'eighty', KAFKA_BROKERS: 'no-port', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' });
    expect(problems.join('\n')).toMatch(/PORT/);
    expect(problems.join('\n')).toMatch(/KAFKA_BROKERS must be a comma-separated list of host:port/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL must be one of/);
    expect(problems.join('\n')).toMatch(/DATABASE_URL must be a postgres:\/\/ URL/);
    expect(problems.length).toBeGreaterThanOrEqual(4);
  });

  it('requires ops credentials once a real database is configured', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://u@db/benefits' }).join('\n')).toMatch(/OPS_PASSWORD is required/);
    expect(problemsOf({ DATABASE_URL: 'postgres://u@db/benefits', OPS_PASSWORD: 'short' }).join('\n')).toMatch(
      /at least 12 characters/,
    );
  });

  it('reads who keeps the queue tables, and refuses an unknown mode', () => {
    expect(loadConfig({}).DATABASE_TABLE_UPKEEP).toBe('auto');
    expect(loadConfig({ DATABASE_TABLE_UPKEEP: 'on', DATABASE_TABLE_UPKEEP_INTERVAL_MS: '5000' })).toMatchObject({ DATABASE_TABLE_UPKEEP: 'on', DATABASE_TABLE_UPKEEP_INTERVAL_MS: 5000 });
    expect(problemsOf({ DATABASE_TABLE_UPKEEP: 'sometimes' }).join('\n')).toMatch(/DATABASE_TABLE_UPKEEP must be one of auto, on, off/);
  });

  it('opens sessions on the direct URL behind a pooler, with prepared statements off unless set', () => {
    const base = { DATABASE_URL: 'postgres://u@pooler:6432/benefits', OPS_PASSWORD: 'correct horse battery' };
    const alone = loadConfig(base);
    expect(alone.databaseSessionUrl).toBe(base.DATABASE_URL);
    expect(alone.preparedStatements).toBe(true);
    const pooled = loadConfig({ ...base, DATABASE_DIRECT_URL: 'postgres://u@db:5432/benefits' });
    expect(pooled.databaseSessionUrl).toBe('postgres://u@db:5432/benefits');
    expect(pooled.preparedStatements).toBe(false);
    expect(loadConfig({ ...base, DATABASE_DIRECT_URL: 'postgres://u@db:5432/benefits', DATABASE_PREPARED_STATEMENTS: 'true' }).preparedStatements).toBe(true);
    expect(loadConfig({ ...base, DATABASE_PREPARED_STATEMENTS: 'false' }).preparedStatements).toBe(false);
    expect(problemsOf({ ...base, DATABASE_DIRECT_URL: 'mysql://db/benefits' })).toEqual([expect.stringMatching(/^DATABASE_DIRECT_URL must be a postgres:\/\/ URL/)]);
  });

  it('refuses a direct URL without DATABASE_URL, which would otherwise be ignored', () => {
    expect(problemsOf({ DATABASE_DIRECT_URL: 'postgres://u@db:5432/benefits' })).toEqual([expect.stringMatching(/^DATABASE_DIRECT_URL is set without DATABASE_URL/)]);
    expect(problemsOf({ DATABASE_URL: '', DATABASE_DIRECT_URL: 'postgres://u@db:5432/benefits' })).toEqual([expect.stringMatching(/without DATABASE_URL/)]);
    expect(loadConfig({ DATABASE_DIRECT_URL: '' }).DATABASE_DIRECT_URL).toBeUndefined();
  });

  it('reads the history tables\' retention and partition window, and refuses days out of range', () => {
    expect(loadConfig({})).toMatchObject({ OUTBOX_RETENTION_DAYS: 7, OPS_AUDIT_RETENTION_DAYS: 365, DATABASE_PARTITION_DAYS_AHEAD: 3 });
    expect(loadConfig({ OUTBOX_RETENTION_DAYS: '14', OPS_AUDIT_RETENTION_DAYS: '30', DATABASE_PARTITION_DAYS_AHEAD: '7' })).toMatchObject({
      OUTBOX_RETENTION_DAYS: 14,
      OPS_AUDIT_RETENTION_DAYS: 30,
      DATABASE_PARTITION_DAYS_AHEAD: 7,
    });
    const problems = problemsOf({ OUTBOX_RETENTION_DAYS: '0', OPS_AUDIT_RETENTION_DAYS: 'forever', DATABASE_PARTITION_DAYS_AHEAD: '90' }).join('\n');
    for (const name of ['OUTBOX_RETENTION_DAYS', 'OPS_AUDIT_RETENTION_DAYS', 'DATABASE_PARTITION_DAYS_AHEAD']) expect(problems).toMatch(name);
  });

  it('keeps idle pooled connections five minutes unless set; 0 keeps them, anything else whole and at most a day', () => {
    expect(loadConfig({}).DATABASE_POOL_IDLE_TIMEOUT_MS).toBe(300_000);
    expect(loadConfig({ DATABASE_POOL_IDLE_TIMEOUT_MS: '0' }).DATABASE_POOL_IDLE_TIMEOUT_MS).toBe(0);
    expect(loadConfig({ DATABASE_POOL_IDLE_TIMEOUT_MS: '15000' }).DATABASE_POOL_IDLE_TIMEOUT_MS).toBe(15_000);
    for (const bad of ['-1', '1.5', 'forever', '86400001']) {
      expect(problemsOf({ DATABASE_POOL_IDLE_TIMEOUT_MS: bad }).join('\n')).toMatch(/DATABASE_POOL_IDLE_TIMEOUT_MS must be a whole number of milliseconds from 0 to 86400000/);
    }
  });

  it('rejects a port out of range', () => {
    expect(problemsOf({ PORT: '70000' }).join('\n')).toMatch(/PORT/);
  });

  it('reads fault-drill rates as shares from 0 to 1, and refuses anything else', () => {
    const config = loadConfig({ PROVIDER_FAILURE_RATE: '0.3', PROVIDER_TIMEOUT_RATE: '1', PROVIDER_TIMEOUT_MS: '250' });
    expect(config.PROVIDER_FAILURE_RATE).toBe(0.3);
    expect(config.PROVIDER_TIMEOUT_RATE).toBe(1);
    expect(config.PROVIDER_TIMEOUT_MS).toBe(250);
    expect(loadConfig({}).PROVIDER_FAILURE_RATE).toBe(0);
    const problems = problemsOf({ PROVIDER_FAILURE_RATE: '1.5', PROVIDER_TIMEOUT_RATE: 'often' }).join('\n');
    expect(problems).toMatch(/PROVIDER_FAILURE_RATE/);
    expect(problems).toMatch(/PROVIDER_TIMEOUT_RATE must be a number from 0 to 1/);
  });

  it('caps the wait between provider retries at five minutes unless set, in whole milliseconds', () => {
    expect(loadConfig({}).PROVIDER_RETRY_MAX_DELAY_MS).toBe(300_000);
    expect(loadConfig({ PROVIDER_RETRY_MAX_DELAY_MS: '8000' }).PROVIDER_RETRY_MAX_DELAY_MS).toBe(8_000);
    for (const bad of ['50', '1.5', 'soon', '3600001']) {
      expect(problemsOf({ PROVIDER_RETRY_MAX_DELAY_MS: bad }).join('\n')).toMatch(/PROVIDER_RETRY_MAX_DELAY_MS/);
    }
  });

  it('bounds the changes of one provider call by a whole number, 1,000 unless set', () => {
    expect(loadConfig({}).PROVIDER_CALL_MAX_CHANGES).toBe(1_000);
    expect(loadConfig({ PROVIDER_CALL_MAX_CHANGES: '25' }).PROVIDER_CALL_MAX_CHANGES).toBe(25);
    for (const bad of ['0', '2.5', 'many', '100001']) {
      expect(problemsOf({ PROVIDER_CALL_MAX_CHANGES: bad }).join('\n')).toMatch(/PROVIDER_CALL_MAX_CHANGES/);
    }
  });
});
