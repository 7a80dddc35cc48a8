import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApplicationAllowedOrigins1796500000000 } from '../../../src/infrastructure/database/migrations/1796500000000-application-allowed-origins';
import { describeWithPostgres } from '../../setup/test-env';
import { openTestDataSource, TestDatabase } from '../../utils/test-database';

describeWithPostgres('migration 1796500000000: application allowed origins', () => {
  let dataSource: DataSource;
  let database: TestDatabase;
  beforeAll(async () => {
    ({ dataSource, database } = await openTestDataSource(1));
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('gives each existing application the origins of its redirect URIs, and none to one without', async () => {
    const migration = new ApplicationAllowedOrigins1796500000000();
    const runner = dataSource.createQueryRunner();
    try {
      // The schema as it was before: applications registered then have no allowed_origins.
      await migration.down(runner);
      const apps = {
        redirects: [randomUUID(), ['https://platform.example/cb', 'https://PLATFORM.example:443/other?x=1', 'http://localhost:4000/cb']],
        embeddedOnly: [randomUUID(), []],
      } as const;
      for (const [id, uris] of Object.values(apps)) {
        await runner.query(`INSERT INTO applications (id, name, secret_hash, redirect_uris, sandbox) VALUES ($1, 'App', 'hash', $2, true)`, [id, uris]);
      }
      await migration.up(runner);
      const origins = async (id: string) => (await runner.query(`SELECT allowed_origins FROM applications WHERE id = $1`, [id]))[0].allowed_origins;
      expect(await origins(apps.redirects[0])).toEqual(['https://platform.example', 'http://localhost:4000']);
      expect(await origins(apps.embeddedOnly[0])).toEqual([]);
    } finally {
      await runner.release();
    }
  });
});
