import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One owner for an enrollment's lifecycle (src/domain/enrollments):
 * - `enrollment_items`: each individual of an effective-date group is a row (its change), with
 *   its result. Waiting changes are found per (benefit, individual) by index, so taking
 *   individuals over and keeping their request order no longer scan every waiting group.
 * - `enrollment_groups` keep a work state (waiting, in_ops, submitting, processed) and counts of
 *   their changes, so a job settles from its few groups, not from all its individuals.
 * - `enrollments.applied`: what the provider holds for the individual, by date. Reads of Assisted
 *   providers and terminations use it, not the latest request's status.
 * - Assisted providers' enrollment work is one ops task per group (`ops_tasks.group_id`); a task
 *   whose individuals were all taken over by later requests ends `cancelled`.
 * - A benefit found at the provider may share its type, frequency and description with another
 *   (two plans of one type): only the service's own creations are deduplicated.
 */
export class EnrollmentLifecycle1796200000000 implements MigrationInterface {
  name = 'EnrollmentLifecycle1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE enrollment_groups
        ADD COLUMN state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'in_ops', 'submitting', 'processed')),
        ADD COLUMN job_seq bigint,
        ADD COLUMN waiting integer NOT NULL DEFAULT 0,
        ADD COLUMN succeeded integer NOT NULL DEFAULT 0,
        ADD COLUMN failed integer NOT NULL DEFAULT 0,
        ADD COLUMN superseded integer NOT NULL DEFAULT 0`);
    await q.query(`
      CREATE TABLE enrollment_items (
        group_id       uuid    NOT NULL REFERENCES enrollment_groups (id),
        individual_id  uuid    NOT NULL,
        benefit_id     uuid    NOT NULL,
        position       integer NOT NULL,
        configuration  jsonb,
        status         text    NOT NULL CHECK (status IN ('waiting', 'done', 'failed', 'superseded')),
        code           integer,
        message        text,
        -- Jobs whose waiting enrollments of this individual this change took over.
        cancels        uuid[]  NOT NULL DEFAULT '{}',
        PRIMARY KEY (group_id, individual_id)
      )`);
    await q.query(`CREATE INDEX enrollment_items_waiting_idx ON enrollment_items (benefit_id, individual_id) WHERE status = 'waiting'`);

    // Groups as they were: `items` still to submit, `results` of those done or taken over.
    await q.query(`
      INSERT INTO enrollment_items (group_id, individual_id, benefit_id, position, configuration, status, code, message)
      SELECT g.id, (r.value->>'individual_id')::uuid, g.benefit_id, (r.ordinality - 1)::int,
             (SELECT i->'configuration' FROM jsonb_array_elements(g.items) i WHERE i->>'individual_id' = r.value->>'individual_id' LIMIT 1),
             CASE WHEN (r.value->>'code')::int = 200 THEN 'done'
                  WHEN (r.value->>'code')::int = 409 AND r.value->>'message' LIKE 'Superseded by job%' THEN 'superseded'
                  ELSE 'failed' END,
             (r.value->>'code')::int, r.value->>'message'
      FROM enrollment_groups g, jsonb_array_elements(coalesce(g.results, '[]'::jsonb)) WITH ORDINALITY r
      ON CONFLICT DO NOTHING`);
    await q.query(`
      INSERT INTO enrollment_items (group_id, individual_id, benefit_id, position, configuration, status)
      SELECT g.id, (i.value->>'individual_id')::uuid, g.benefit_id, (1000000 + i.ordinality)::int, i.value->'configuration', 'waiting'
      FROM enrollment_groups g, jsonb_array_elements(g.items) WITH ORDINALITY i
      WHERE g.status = 'pending'
      ON CONFLICT DO NOTHING`);
    await q.query(`
      UPDATE enrollment_groups g SET
        job_seq = j.seq,
        state = CASE WHEN g.status = 'processed' THEN 'processed'
                     WHEN EXISTS (SELECT 1 FROM jobs w WHERE w.type = 'benefit_enrollment_group' AND w.params->>'group_id' = g.id::text
                                    AND w.status = 'in_progress') THEN 'submitting'
                     ELSE 'waiting' END,
        waiting = c.waiting, succeeded = c.succeeded, failed = c.failed, superseded = c.superseded
      FROM jobs j, (
        SELECT g2.id AS group_id,
               count(i.group_id) FILTER (WHERE i.status = 'waiting')::int AS waiting, count(i.group_id) FILTER (WHERE i.status = 'done')::int AS succeeded,
               count(i.group_id) FILTER (WHERE i.status = 'failed')::int AS failed, count(i.group_id) FILTER (WHERE i.status = 'superseded')::int AS superseded
        FROM enrollment_groups g2 LEFT JOIN enrollment_items i ON i.group_id = g2.id GROUP BY g2.id) c
      WHERE j.id = g.job_id AND c.group_id = g.id`);
    await q.query(`ALTER TABLE enrollment_groups ALTER COLUMN job_seq SET NOT NULL`);
    await q.query(`DROP INDEX enrollment_groups_waiting_idx`);
    await q.query(`ALTER TABLE enrollment_groups DROP COLUMN items, DROP COLUMN results, DROP COLUMN status`);

    // What the provider holds, by date. Rows whose latest request is still pending or failed do
    // not say what was there before it: they start empty (reads of those individuals on
    // Assisted providers show them again once their next change applies).
    await q.query(`ALTER TABLE enrollments ADD COLUMN applied jsonb NOT NULL DEFAULT '[]'::jsonb`);
    await q.query(`
      UPDATE enrollments SET applied = CASE
        WHEN status = 'enrolled' THEN jsonb_build_array(jsonb_build_object('from', to_char(effective_date, 'YYYY-MM-DD'), 'configuration', configuration))
        WHEN status = 'unenrolled' AND ended_on IS NOT NULL THEN jsonb_build_array(
          jsonb_build_object('from', to_char(effective_date, 'YYYY-MM-DD'), 'configuration', configuration),
          jsonb_build_object('from', to_char(ended_on, 'YYYY-MM-DD'), 'configuration', NULL))
        ELSE '[]'::jsonb END`);
    await q.query(`ALTER TABLE enrollments ALTER COLUMN configuration DROP NOT NULL, ALTER COLUMN effective_date DROP NOT NULL`);

    // Assisted enrollment work: one task per group.
    await q.query(`ALTER TABLE ops_tasks ADD COLUMN group_id uuid REFERENCES enrollment_groups (id)`);
    await q.query(`ALTER TABLE ops_tasks DROP CONSTRAINT ops_tasks_job_id_key`);
    await q.query(`CREATE INDEX ops_tasks_job_idx ON ops_tasks (job_id)`);
    await q.query(`CREATE UNIQUE INDEX ops_tasks_group_idx ON ops_tasks (group_id) WHERE group_id IS NOT NULL`);
    await q.query(`ALTER TABLE ops_tasks DROP CONSTRAINT ops_tasks_status_check`);
    await q.query(`ALTER TABLE ops_tasks ADD CONSTRAINT ops_tasks_status_check CHECK (status IN ('open', 'completed', 'failed', 'cancelled'))`);
    await this.groupsForOpenAssistedTasks(q);

    // Only the service's own creations are deduplicated; a plan found at the provider keeps its id.
    await q.query(`DROP INDEX benefits_dedupe_idx`);
    await q.query(
      `CREATE UNIQUE INDEX benefits_dedupe_idx ON benefits (entity_id, type, coalesce(frequency, ''), description) WHERE origin <> 'provider'`,
    );
  }

  /**
   * Assisted enroll and unenroll tasks still open were one task per request: each becomes the
   * task of the request's first group (dated groups after it get tasks of their own, due alike),
   * so completing them goes through the lifecycle like new ones.
   */
  private async groupsForOpenAssistedTasks(q: QueryRunner): Promise<void> {
    const tasks: { id: string; job_id: string; type: string; payload: Record<string, unknown>; seq: string; connection_id: string; entity_id: string; due_date: string; created_at: Date }[] =
      await q.query(
        `SELECT t.id, t.job_id, t.type, t.payload, j.seq, t.connection_id, t.entity_id, to_char(t.due_date, 'YYYY-MM-DD') AS due_date, t.created_at
         FROM ops_tasks t JOIN jobs j ON j.id = t.job_id
         WHERE t.status = 'open' AND t.type IN ('benefit_enroll', 'benefit_unenroll')`,
      );
    for (const task of tasks) {
      const benefitId = String(task.payload.benefit_id);
      const groups: { effective_date: string; items: { individual_id: string; configuration: unknown }[] }[] =
        task.type === 'benefit_enroll'
          ? (task.payload.groups as { effective_date: string; items: { individual_id: string; configuration: unknown }[] }[])
          : [
              {
                effective_date: String(task.payload.effective_date),
                items: (task.payload.individual_ids as string[]).map((id) => ({ individual_id: id, configuration: null })),
              },
            ];
      const operation = task.type === 'benefit_enroll' ? 'enroll' : 'unenroll';
      for (const [index, group] of groups.entries()) {
        const [{ id: groupId }] = await q.query(
          `INSERT INTO enrollment_groups (id, job_id, benefit_id, operation, effective_date, processed_at, state, job_seq, waiting)
           VALUES (gen_random_uuid(), $1, $2, $3, $4::date, NULL, 'in_ops', $5, $6) RETURNING id`,
          [task.job_id, benefitId, operation, group.effective_date, task.seq, group.items.length],
        );
        await q.query(
          `INSERT INTO enrollment_items (group_id, individual_id, benefit_id, position, configuration, status)
           SELECT $1, (i.value->>'individual_id')::uuid, $2, (i.ordinality - 1)::int, i.value->'configuration', 'waiting'
           FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY i`,
          [groupId, benefitId, JSON.stringify(group.items)],
        );
        const payload =
          operation === 'enroll'
            ? { benefit_id: benefitId, groups: [group] }
            : { benefit_id: benefitId, effective_date: group.effective_date, individual_ids: group.items.map((i) => i.individual_id) };
        if (index === 0) {
          await q.query(`UPDATE ops_tasks SET group_id = $2, payload = $3::jsonb WHERE id = $1`, [task.id, groupId, JSON.stringify(payload)]);
        } else {
          await q.query(
            `INSERT INTO ops_tasks (id, connection_id, entity_id, job_id, group_id, type, payload, status, due_date, created_at)
             VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6::jsonb, 'open', $7::date, $8)`,
            [task.connection_id, task.entity_id, task.job_id, groupId, task.type, JSON.stringify(payload), task.due_date, task.created_at],
          );
        }
      }
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX benefits_dedupe_idx`);
    await q.query(`CREATE UNIQUE INDEX benefits_dedupe_idx ON benefits (entity_id, type, coalesce(frequency, ''), description)`);
    await q.query(`DELETE FROM ops_tasks WHERE status = 'cancelled'`);
    await q.query(`ALTER TABLE ops_tasks DROP CONSTRAINT ops_tasks_status_check`);
    await q.query(`ALTER TABLE ops_tasks ADD CONSTRAINT ops_tasks_status_check CHECK (status IN ('open', 'completed', 'failed'))`);
    await q.query(`DROP INDEX ops_tasks_group_idx`);
    await q.query(`DROP INDEX ops_tasks_job_idx`);
    await q.query(`ALTER TABLE ops_tasks DROP COLUMN group_id`);
    await q.query(`ALTER TABLE enrollments DROP COLUMN applied`);
    await q.query(`ALTER TABLE enrollment_groups ADD COLUMN items jsonb NOT NULL DEFAULT '[]'::jsonb, ADD COLUMN results jsonb, ADD COLUMN status text NOT NULL DEFAULT 'pending'`);
    await q.query(`UPDATE enrollment_groups SET status = CASE WHEN state = 'processed' THEN 'processed' ELSE 'pending' END`);
    await q.query(`
      UPDATE enrollment_groups g SET
        items = coalesce((SELECT jsonb_agg(jsonb_build_object('individual_id', i.individual_id, 'configuration', i.configuration) ORDER BY i.position)
                          FROM enrollment_items i WHERE i.group_id = g.id AND i.status IN ('waiting', 'done', 'failed')), '[]'::jsonb),
        results = (SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('individual_id', i.individual_id, 'code', i.code, 'message', i.message)) ORDER BY i.position)
                   FROM enrollment_items i WHERE i.group_id = g.id AND i.status <> 'waiting')`);
    await q.query(`CREATE INDEX enrollment_groups_waiting_idx ON enrollment_groups (benefit_id, effective_date) WHERE status = 'pending'`);
    await q.query(`DROP TABLE enrollment_items`);
    await q.query(`ALTER TABLE enrollment_groups DROP COLUMN state, DROP COLUMN job_seq, DROP COLUMN waiting, DROP COLUMN succeeded, DROP COLUMN failed, DROP COLUMN superseded`);
  }
}
