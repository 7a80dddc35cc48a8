import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { DataDirLock } from './data-dir-lock';

/**
 * PostgreSQL embedded in the process (PGlite) and served over the Postgres wire protocol on
 * loopback, so the same TypeORM data source and `pg` driver run against it as against a real
 * server. PGlite is a single backend session: the pool in front of it must hold one connection.
 * A data directory is locked to one process (service or CLI): two would overwrite each other.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    readonly url: string,
    readonly dataDir: string | undefined,
    private readonly lock: DataDirLock | undefined,
  ) {}

  /** `dataDir` undefined keeps the database in memory (tests). */
  static async start(dataDir?: string): Promise<EmbeddedPostgres> {
    let directory: string | undefined;
    let lock: DataDirLock | undefined;
    if (dataDir !== undefined) {
      mkdirSync(resolve(dataDir), { recursive: true });
      lock = DataDirLock.acquire(resolve(dataDir));
      directory = resolve(dataDir, 'pglite');
      mkdirSync(directory, { recursive: true });
    }
    try {
      const db = await PGlite.create(directory === undefined ? {} : { dataDir: directory });
      const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
      await server.start();
      const address = server.getServerConn();
      return new EmbeddedPostgres(db, server, `postgres://postgres@${address}/postgres`, directory, lock);
    } catch (error) {
      lock?.release();
      throw error;
    }
  }

  async stop(): Promise<void> {
    try {
      await this.server.stop();
      await this.db.close();
    } finally {
      this.lock?.release();
    }
  }
}
