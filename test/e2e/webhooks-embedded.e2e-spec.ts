import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Finch from '@tryfinch/finch-api';
import { DataSource } from 'typeorm';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { ApplicationsService } from '../../src/modules/applications/applications.service';
import { basic, bearer } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, request } from '../utils/test-app';
import { WebhookReceiver } from '../utils/webhook-receiver';
import { EMBEDDED_START_TIMEOUT_MS } from '../utils/embedded';

// The embedded default (PGlite, one connection, no WEBHOOK_SECRETS_KEY): the key is generated
// into the data directory, and the dispatcher shares the one connection with everything else.
describe('webhooks on the embedded database (PGlite)', () => {
  let service: RunningService;
  let dataDir: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bo-embedded-webhooks-'));
    receiver = await new WebhookReceiver().start();
    service = await startService(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', EMBEDDED_DATA_DIR: dataDir, PROVIDER_LATENCY_MS: '0', JOB_POLL_MS: '20', WEBHOOK_POLL_MS: '20' }),
    );
  }, EMBEDDED_START_TIMEOUT_MS);

  afterAll(async () => {
    await service?.close();
    await receiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs with a key kept in the data directory and delivers a sync’s completion', async () => {
    const app = await service.app.get(ApplicationsService).create({ name: 'Embedded', redirectUris: [], sandbox: true });
    const endpoint = await request(service.url, '/webhooks/endpoints', json({ url: receiver.url, event_types: ['job.data_sync_all.completed'] }, basic(app)));
    expect(endpoint.status).toBe(201);
    const keyFile = join(dataDir, 'webhook-secrets.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, 'utf8')).not.toContain(endpoint.body.secret);

    const connection = await request(service.url, '/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 5 }, basic(app)));
    const started = await request(service.url, '/jobs/automated', json({ type: 'data_sync_all' }, bearer(connection.body.access_token)));
    expect(started.status).toBe(201);
    await expectEventually(() => expect(receiver.received).toHaveLength(1), { timeoutMs: 60_000 });
    const event = new Finch({ accessToken: 'unused' }).webhooks.unwrap(receiver.received[0].body, receiver.received[0].headers, endpoint.body.secret);
    expect(event).toMatchObject({ event_type: 'job.data_sync_all.completed', data: { job_id: started.body.job_id } });
  });

  it('replays an endpoint made with an Idempotency-Key without its secret, and counts the key (issue 38, findings 5 and 7)', async () => {
    const app = await service.app.get(ApplicationsService).create({ name: 'Embedded keys', redirectUris: [], sandbox: true });
    const create = () =>
      request(service.url, '/webhooks/endpoints', json({ url: 'https://hooks.platform.example.com/in' }, { ...basic(app), 'idempotency-key': 'embedded-1' }));
    const first = await create();
    expect(first.status).toBe(201);
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const { secret, ...endpoint } = first.body;
    expect(again.body).toEqual(endpoint);
    expect(again.text).not.toContain(secret);
    const allowance = await service.app.get(DataSource).query(`SELECT keys FROM idempotency_allowances WHERE owner = $1`, [`application:${app.client_id}`]);
    expect(allowance).toEqual([{ keys: 1 }]);
  });
});
