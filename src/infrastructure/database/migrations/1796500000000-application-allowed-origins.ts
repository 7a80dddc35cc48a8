import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Applications register the origins their pages run on: the embedded connect flow posts the
 * code to `window.opener` with one of them as the target, never `*`. An existing application
 * starts with the origins of its redirect URIs, which already receive its codes, so that grants
 * nothing new; one without redirect URIs starts with none and registers its origins
 * (`applications update --origin`) before its embedded flow works again.
 */
export class ApplicationAllowedOrigins1796500000000 implements MigrationInterface {
  name = 'ApplicationAllowedOrigins1796500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE applications ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}'`);
    const rows: { id: string; redirect_uris: string[] }[] = await q.query(
      `SELECT id, redirect_uris FROM applications WHERE cardinality(redirect_uris) > 0`,
    );
    for (const row of rows) {
      // Origins as the browser writes them (URL#origin), the form the connect page compares.
      const origins = [...new Set(row.redirect_uris.flatMap(originOf))];
      if (origins.length > 0) await q.query(`UPDATE applications SET allowed_origins = $2 WHERE id = $1`, [row.id, origins]);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE applications DROP COLUMN allowed_origins`);
  }
}

/** The http(s) origin of a stored redirect URI; none for anything else. Kept here so the migration never changes. */
function originOf(uri: string): string[] {
  try {
    const { protocol, origin } = new URL(uri);
    return protocol === 'http:' || protocol === 'https:' ? [origin] : [];
  } catch {
    return [];
  }
}
