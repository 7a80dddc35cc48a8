import { withAdminClient } from './admin-client';

/** Drops every database this run created (template and per-file clones). */
export default async function globalTeardown(): Promise<void> {
  const server = process.env.TEST_DATABASE_URL;
  const runId = process.env.TEST_RUN_ID;
  if (!server || !runId || process.env.TEST_KEEP_DATABASES === 'true') return;
  await withAdminClient(server, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1`,
      [`bo_t_${runId}_%`],
    );
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  });
}
