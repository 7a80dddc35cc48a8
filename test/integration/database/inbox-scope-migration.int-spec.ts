import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/infrastructure/database/data-source';
import { MIGRATIONS } from '../../../src/infrastructure/database/migration-list';
import { InboxScope1796400000000 } from '../../../src/infrastructure/database/migrations/1796400000000-inbox-scope';
import { databaseUrl, withAdminClient } from '../../setup/admin-client';
import { describeWithPostgres, testEnv } from '../../setup/test-env';

const HRIS = 'hris-sagas';

/**
 * The migration that scopes the inbox key: rows written under the old key (consumer, id) keep
 * deduplicating under the new one (consumer, scope, id). An applied HRIS event is scoped by its
 * saga's connection, a dead-lettered one by its payload's connection; what tells of none, and
 * other consumers' rows, keep the scope ''. Down goes back to one row per id.
 */
describeWithPostgres('migration: inbox keys scoped by connection', () => {
  const name = `bo_t_${testEnv.runId}_${randomBytes(4).toString('hex')}`;
  const server = testEnv.databaseUrl!;
  const upTo = MIGRATIONS.indexOf(InboxScope1796400000000);
  let db: DataSource;

  const open = async (migrations: typeof MIGRATIONS) => {
    // Not logged: two statements here fail on purpose.
    const source = new DataSource({ ...dataSourceOptions({ url: databaseUrl(server, name), poolSize: 1 }), migrations, logging: false });
    await source.initialize();
    return source;
  };

  const application = randomUUID();
  const connection = randomUUID();
  const otherConnection = randomUUID();
  const applied = randomUUID().toUpperCase(); // stored by the saga as sent; the inbox holds it lower-cased
  const deadLettered = randomUUID();
  const notJson = randomUUID();
  const elsewhere = randomUUID();

  beforeAll(async () => {
    expect(upTo).toBeGreaterThan(0);
    await withAdminClient(server, (c) => c.query(`CREATE DATABASE ${name}`));
    db = await open(MIGRATIONS.slice(0, upTo));
    await db.query(`INSERT INTO applications (id, name, secret_hash) VALUES ($1, 'app', 'x')`, [application]);
    for (const id of [connection, otherConnection]) {
      await db.query(
        `INSERT INTO connections (id, application_id, provider_id, authentication_type, account_id, company_id, products, status, sandbox)
         VALUES ($1, $2, 'sandbox_automated', 'credential', $3, $4, '{}', 'connected', true)`,
        [id, application, randomUUID(), randomUUID()],
      );
    }
    await db.query(
      `INSERT INTO sagas (id, type, state, connection_id, source_event_id, created_at, updated_at) VALUES ($1, 'new_hire', 'completed', $2, $3, now(), now())`,
      [randomUUID(), connection, applied],
    );
    await db.query(
      `INSERT INTO dead_letters (id, consumer, topic, message_id, payload, reason) VALUES
         ($1, $3, 'hris.events', $4, $5, 'Unknown connection'),
         ($2, $3, 'hris.events', $6, '{"connection_id": ', 'body is not valid JSON')`,
      [randomUUID(), randomUUID(), HRIS, deadLettered, JSON.stringify({ id: deadLettered, connection_id: otherConnection.toUpperCase() }), notJson],
    );
    await db.query(
      `INSERT INTO inbox_messages (consumer, message_id, topic) VALUES ($1, $2, 'hris.events'), ($1, $3, 'hris.events'), ($1, $4, 'hris.events'), ('other', $5, 'other.topic')`,
      [HRIS, applied.toLowerCase(), deadLettered, notJson, elsewhere],
    );
    await db.destroy();
    db = await open(MIGRATIONS.slice(0, upTo + 1));
  });

  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await withAdminClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });

  it('scopes the rows already there from the saga or the dead letter they left', async () => {
    const rows: { consumer: string; scope: string; message_id: string }[] = await db.query(`SELECT consumer, scope, message_id FROM inbox_messages`);
    expect(rows.map((r) => `${r.consumer} ${r.message_id} → ${r.scope}`).sort()).toEqual(
      [`${HRIS} ${applied.toLowerCase()} → ${connection}`, `${HRIS} ${deadLettered} → ${otherConnection}`, `${HRIS} ${notJson} → `, `other ${elsewhere} → `].sort(),
    );
    expect(await db.query(`SELECT scope, message_id FROM dead_letters ORDER BY scope = ''`)).toEqual([
      { scope: otherConnection, message_id: deadLettered },
      { scope: '', message_id: notJson },
    ]);
  });

  it('keys the inbox and the HRIS sagas by connection: the same id is new in another one, taken in its own', async () => {
    const claim = (scope: string, id: string) =>
      db.query(`INSERT INTO inbox_messages (consumer, scope, message_id, topic) VALUES ($1, $2, $3, 'hris.events') ON CONFLICT DO NOTHING RETURNING 1`, [HRIS, scope, id]);
    expect(await claim(connection, applied.toLowerCase())).toHaveLength(0);
    expect(await claim(otherConnection, deadLettered)).toHaveLength(0);
    expect(await claim(otherConnection, applied.toLowerCase())).toHaveLength(1);

    const saga = (connectionId: string) =>
      db.query(`INSERT INTO sagas (id, type, state, connection_id, source_event_id, created_at, updated_at) VALUES ($1, 'new_hire', 'started', $2, $3, now(), now())`, [
        randomUUID(),
        connectionId,
        applied,
      ]);
    await expect(saga(otherConnection)).resolves.toBeDefined();
    await expect(saga(connection)).rejects.toThrow(/sagas_source_event_idx/);
    // Back to what the old key can hold before going down.
    await db.query(`DELETE FROM sagas WHERE connection_id = $1`, [otherConnection]);
  });

  it('goes down to one inbox row per id, the earliest', async () => {
    await db.undoLastMigration();
    expect(await db.query(`SELECT message_id FROM inbox_messages WHERE consumer = $1 AND message_id = $2`, [HRIS, applied.toLowerCase()])).toEqual([
      { message_id: applied.toLowerCase() },
    ]);
    const columns = await db.query(`SELECT table_name FROM information_schema.columns WHERE column_name = 'scope' AND table_name IN ('inbox_messages', 'dead_letters')`);
    expect(columns).toEqual([]);
    await expect(db.query(`INSERT INTO inbox_messages (consumer, message_id, topic) VALUES ($1, $2, 'hris.events')`, [HRIS, applied.toLowerCase()])).rejects.toThrow(
      /inbox_messages_pkey/,
    );
  });
});
