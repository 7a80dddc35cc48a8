import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Running instances and their heartbeats. A lease records its holder's `id` (jobs.leased_by,
 * outbox_lanes.leased_by), so the leases of an instance that stopped beating (killed, its host
 * gone) are freed at once rather than when they run out. `name` is the same across one
 * instance's restarts: a restarted process frees what its predecessor held as it starts.
 */
export class ServiceInstances1796600000000 implements MigrationInterface {
  name = 'ServiceInstances1796600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE service_instances (
        id            text PRIMARY KEY,
        name          text NOT NULL,
        host          text NOT NULL,
        pid           integer NOT NULL,
        started_at    timestamptz NOT NULL DEFAULT now(),
        heartbeat_at  timestamptz NOT NULL DEFAULT now()
      ) WITH (fillfactor = 50)`);
    await q.query(`CREATE INDEX service_instances_name_idx ON service_instances (name)`);
    // The leases a gone instance left: few rows (running jobs), found without reading the queue.
    await q.query(`CREATE INDEX jobs_leased_by_idx ON jobs (leased_by) WHERE leased_by IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX jobs_leased_by_idx`);
    await q.query(`DROP TABLE service_instances`);
  }
}
