import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PostgreSQL embedded in the process (PGlite) and served over the Postgres wire protocol on
 * loopback, so the same TypeORM data source and `pg` driver run against it as against a real
 * server. PGlite is a single backend session: the pool in front of it must hold one connection.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    readonly url: string,
    readonly dataDir: string | undefined,
  ) {}

  /** `dataDir` undefined keeps the database in memory (tests). */
  static async start(dataDir?: string): Promise<EmbeddedPostgres> {
    let directory: string | undefined;
    if (dataDir !== undefined) {
      directory = resolve(dataDir, 'pglite');
      mkdirSync(directory, { recursive: true });
    }
    const db = await PGlite.create(directory === undefined ? {} : { dataDir: directory });
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
    await server.start();
    const address = server.getServerConn();
    return new EmbeddedPostgres(db, server, `postgres://postgres@${address}/postgres`, directory);
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
  }
}
