import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Notifications that let every instance keep read caches exact (src/infrastructure/database/
 * change-notifications.ts): a change to what an access token grants (its connection's status,
 * products or entities, or the token itself) sends `auth_changed` with the connection id; a
 * sync switching an entity to a new generation sends `employer_sync` with the entity id.
 * Both are sent when the writing transaction commits, to every session that listens.
 */
export class ChangeNotifications1797200000000 implements MigrationInterface {
  name = 'ChangeNotifications1797200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(notifyFunction('notify_connection_changed', 'auth_changed', 'id'));
    await q.query(notifyFunction('notify_connection_part_changed', 'auth_changed', 'connection_id'));
    await q.query(notifyFunction('notify_employer_sync', 'employer_sync', 'entity_id'));
    await q.query(`CREATE TRIGGER connections_notify AFTER UPDATE OR DELETE ON connections FOR EACH ROW EXECUTE FUNCTION notify_connection_changed()`);
    await q.query(`CREATE TRIGGER connection_entities_notify AFTER INSERT OR UPDATE OR DELETE ON connection_entities FOR EACH ROW EXECUTE FUNCTION notify_connection_part_changed()`);
    await q.query(`CREATE TRIGGER access_tokens_notify AFTER UPDATE OR DELETE ON access_tokens FOR EACH ROW EXECUTE FUNCTION notify_connection_part_changed()`);
    await q.query(`CREATE TRIGGER employer_syncs_notify AFTER INSERT OR UPDATE OR DELETE ON employer_syncs FOR EACH ROW EXECUTE FUNCTION notify_employer_sync()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS employer_syncs_notify ON employer_syncs`);
    await q.query(`DROP TRIGGER IF EXISTS access_tokens_notify ON access_tokens`);
    await q.query(`DROP TRIGGER IF EXISTS connection_entities_notify ON connection_entities`);
    await q.query(`DROP TRIGGER IF EXISTS connections_notify ON connections`);
    await q.query(`DROP FUNCTION IF EXISTS notify_employer_sync()`);
    await q.query(`DROP FUNCTION IF EXISTS notify_connection_part_changed()`);
    await q.query(`DROP FUNCTION IF EXISTS notify_connection_changed()`);
  }
}

/** A row trigger's function that notifies `channel` with the changed row's `column` (the old row's on delete). */
function notifyFunction(name: string, channel: string, column: string): string {
  return `
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN PERFORM pg_notify('${channel}', OLD.${column}::text);
      ELSE PERFORM pg_notify('${channel}', NEW.${column}::text);
      END IF;
      RETURN NULL;
    END $$`;
}
