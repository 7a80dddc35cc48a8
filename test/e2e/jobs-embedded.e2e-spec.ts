import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { ApplicationsService } from '../../src/modules/applications/applications.service';
import { basic, bearer } from '../utils/connect';
import { expectEventually } from '../utils/expect-eventually';
import { json, request } from '../utils/test-app';
import { EMBEDDED_START_TIMEOUT_MS } from '../utils/embedded';

// The embedded database is one backend session (a pool of one connection): the worker, its
// lease renewals, the provider's reads and the sync's writes must all share it without a deadlock.
describe('data sync on the embedded database (PGlite)', () => {
  let service: RunningService;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'bo-embedded-sync-'));
    service = await startService(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', EMBEDDED_DATA_DIR: dataDir, PROVIDER_LATENCY_MS: '0', JOB_POLL_MS: '20' }),
    );
  }, EMBEDDED_START_TIMEOUT_MS);

  afterAll(async () => {
    await service?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('enqueues a sync that a worker completes', async () => {
    const app = await service.app.get(ApplicationsService).create({ name: 'Embedded', redirectUris: [], sandbox: true });
    const connection = await request(service.url, '/sandbox/connections', json({ provider_id: 'sandbox_automated', employee_size: 30 }, basic(app)));
    expect(connection.status).toBe(200);
    const token = connection.body.access_token;

    const created = await request(service.url, '/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect(created.status).toBe(201);
    const job = await expectEventually(
      async () => {
        const res = await request(service.url, `/jobs/automated/${created.body.job_id}`, { headers: bearer(token) });
        expect(res.body.status).toBe('complete');
        return res.body;
      },
      { timeoutMs: 60_000 },
    );
    expect(job.type).toBe('data_sync_all');
    const again = await request(service.url, '/jobs/automated', json({ type: 'data_sync_all' }, bearer(token)));
    expect(again.status).toBe(201);
    expect(again.body.remaining_refreshes).toBe(8);
  });
});
