import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { WebhookEndpointsRepository } from '../../../src/modules/webhooks/webhook-endpoints.repository';
import { WebhookQueueRepository } from '../../../src/modules/webhooks/webhook-queue.repository';
import { describeWithPostgres } from '../../setup/test-env';
import { connectEmployer, createApplication } from '../../utils/connect';
import { expectEventually } from '../../utils/expect-eventually';
import { startTestService, TestService } from '../../utils/test-app';

/**
 * The delivery queue's locks against an endpoint being deleted: the dispatcher records an
 * attempt while an operator deletes the attempt's endpoint. Both take the endpoint's row and its
 * deliveries' rows; taken in opposite orders they deadlock and one of them fails. And the fan-out
 * (`webhook_enqueue()`, inside the transaction that completes a job or changes a connection)
 * against the same delete: the delete must not fail the fan-out's transaction.
 */
describeWithPostgres('webhook queue locks (PostgreSQL)', () => {
  let service: TestService;
  let db: DataSource;
  let queue: WebhookQueueRepository;
  let endpoints: WebhookEndpointsRepository;

  beforeAll(async () => {
    service = await startTestService();
    db = service.app.get(DataSource);
    queue = service.app.get(WebhookQueueRepository);
    endpoints = service.app.get(WebhookEndpointsRepository);
  });
  afterAll(() => service?.close());

  /** An endpoint with one delivery leased by `holder` (for long: the dispatcher leaves it be). */
  async function leasedDelivery(holder: string): Promise<{ endpointId: string; deliveryId: string; deliveryCreatedAt: string }> {
    const app = await createApplication(service);
    const endpointId = randomUUID();
    const eventId = randomUUID();
    await db.query(
      `INSERT INTO webhook_endpoints (id, application_id, url, event_types, secret_sealed)
       VALUES ($1, $2, 'https://receiver.example/hook', '{account.updated}', 'x')`,
      [endpointId, app.client_id],
    );
    await db.query(
      `INSERT INTO webhook_events (id, application_id, connection_id, company_id, account_id, event_type)
       VALUES ($1, $2, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'account.updated')`,
      [eventId, app.client_id],
    );
    const [delivery] = await db.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, connection_id, leased_by, lease_until)
       VALUES ($1, $2, gen_random_uuid(), $3, now() + interval '1 hour')
       RETURNING id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at`,
      [endpointId, eventId, holder],
    );
    return { endpointId, deliveryId: String(delivery.id), deliveryCreatedAt: delivery.created_at as string };
  }

  /**
   * The delete as the API runs it (the endpoint's row locked first, then the row and its
   * deliveries deleted), begun and holding the lock until `deleteNow`; `deleting` settles with it.
   */
  async function deletionUnderway(endpointId: string): Promise<{ deleting: Promise<void>; deleteNow: () => void }> {
    let deleteNow!: () => void;
    const told = new Promise<void>((resolve) => (deleteNow = resolve));
    const deleting = db.transaction(async (manager) => {
      expect(await endpoints.find(endpointId, undefined, manager, true)).not.toBeNull();
      await told;
      await endpoints.delete(endpointId, manager);
    });
    await expectEventually(async () => expect(await endpointLocked(endpointId)).toBe(true));
    return { deleting, deleteNow };
  }

  const waitingOnLocks = async (): Promise<number> => {
    const [row] = await db.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return row.n;
  };

  it('an attempt recorded while its endpoint is being deleted waits for the delete, and records nothing', async () => {
    const holder = `instance-${randomUUID()}`;
    const { endpointId, deliveryId, deliveryCreatedAt } = await leasedDelivery(holder);
    const { deleting, deleteNow } = await deletionUnderway(endpointId);
    const recording = queue.record(
      holder,
      [{ deliveryId, deliveryCreatedAt, attemptedAt: new Date(), statusCode: 500, latencyMs: 3, excerpt: '', error: null, status: 'pending', nextAttemptAt: new Date() }],
      60_000,
    );
    await expectEventually(async () => expect(await waitingOnLocks()).toBeGreaterThan(0));
    deleteNow();

    await expect(deleting).resolves.toBeUndefined();
    await expect(recording).resolves.toEqual([]);
    const [left] = await db.query(`SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = $1`, [deliveryId]);
    expect(left.n).toBe(0);
  });

  it('records an attempt, its delivery and its endpoint’s health when nothing is deleted', async () => {
    const holder = `instance-${randomUUID()}`;
    const { endpointId, deliveryId, deliveryCreatedAt } = await leasedDelivery(holder);
    const attemptedAt = new Date();
    await queue.record(
      holder,
      [{ deliveryId, deliveryCreatedAt, attemptedAt, statusCode: 503, latencyMs: 7, excerpt: 'busy', error: null, status: 'pending', nextAttemptAt: new Date(Date.now() + 60_000) }],
      60_000,
    );
    const [delivery] = await db.query(`SELECT attempts, leased_by, last_status_code FROM webhook_deliveries WHERE id = $1`, [deliveryId]);
    expect(delivery).toEqual({ attempts: 1, leased_by: null, last_status_code: 503 });
    const [endpoint] = await db.query(`SELECT failing_since FROM webhook_endpoints WHERE id = $1`, [endpointId]);
    expect(endpoint.failing_since?.getTime()).toBe(attemptedAt.getTime());
  });

  /** A connection of a new application, and an endpoint of that application for `account.updated`. */
  async function subscribedConnection(): Promise<{ endpointId: string; connectionId: string }> {
    const app = await createApplication(service);
    const { connectionId } = await connectEmployer(service, app);
    const endpointId = randomUUID();
    await db.query(
      `INSERT INTO webhook_endpoints (id, application_id, url, event_types, secret_sealed)
       VALUES ($1, $2, 'https://receiver.example/hook', '{account.updated}', 'x')`,
      [endpointId, app.client_id],
    );
    return { endpointId, connectionId };
  }

  const fanOut = (connectionId: string, manager: { query: DataSource['query'] } = db) =>
    manager.query(`SELECT webhook_enqueue(ARRAY[$1::uuid], ARRAY[NULL::uuid], ARRAY['account.updated'], ARRAY['{}'::jsonb]) AS queued`, [connectionId]);

  const deliveriesOf = async (endpointId: string): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1`, [endpointId]))[0].n;

  it('a fan-out while its endpoint is being deleted waits for the delete, queues nothing for it, and commits', async () => {
    const { endpointId, connectionId } = await subscribedConnection();
    const { deleting, deleteNow } = await deletionUnderway(endpointId);
    const fanning = db.transaction(async (manager) => {
      const [row] = await fanOut(connectionId, manager);
      // The rest of the transaction (a job's completion) goes on.
      await manager.query(`SELECT 1`);
      return row.queued;
    });
    await expectEventually(async () => expect(await waitingOnLocks()).toBeGreaterThan(0));
    deleteNow();

    await expect(deleting).resolves.toBeUndefined();
    await expect(fanning).resolves.toBe(0);
    expect(await deliveriesOf(endpointId)).toBe(0);
  });

  it('a delete during a fan-out waits for it, then takes what it queued with the endpoint', async () => {
    const { endpointId, connectionId } = await subscribedConnection();
    let commitNow!: () => void;
    const told = new Promise<void>((resolve) => (commitNow = resolve));
    const fanning = db.transaction(async (manager) => {
      const [row] = await fanOut(connectionId, manager);
      await told;
      return row.queued;
    });
    await expectEventually(async () => expect(await endpointLocked(endpointId)).toBe(true));
    const deleting = db.transaction((manager) => endpoints.delete(endpointId, manager));
    await expectEventually(async () => expect(await waitingOnLocks()).toBeGreaterThan(0));
    commitNow();

    await expect(fanning).resolves.toBe(1);
    await expect(deleting).resolves.toBeUndefined();
    expect(await deliveriesOf(endpointId)).toBe(0);
    expect((await db.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE id = $1`, [endpointId]))[0].n).toBe(0);
  });

  it('a fan-out with nothing deleted queues one delivery per subscribed endpoint', async () => {
    const { endpointId, connectionId } = await subscribedConnection();
    const [row] = await fanOut(connectionId);
    expect(row.queued).toBe(1);
    expect(await deliveriesOf(endpointId)).toBe(1);
  });

  /** Whether some transaction holds the endpoint's row locked (a second locker would wait). */
  async function endpointLocked(id: string): Promise<boolean> {
    return db.transaction(async (manager) => {
      const rows = await manager.query(`SELECT id FROM webhook_endpoints WHERE id = $1 FOR UPDATE SKIP LOCKED`, [id]);
      return rows.length === 0;
    });
  }
});
