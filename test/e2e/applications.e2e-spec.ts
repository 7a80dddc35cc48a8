import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { ApplicationsBootstrap } from '../../src/modules/applications/applications.bootstrap';
import { ApplicationsService } from '../../src/modules/applications/applications.service';
import { describeWithPostgres } from '../setup/test-env';
import { runCommand, runEntry, startEntry } from '../utils/child-process';
import { basic } from '../utils/connect';
import { createTestDatabase, TestDatabase } from '../utils/test-database';
import { json, request } from '../utils/test-app';

const cli = (args: string[], env: Record<string, string>) => runEntry('cli', args, env);

/** Starts the service on an existing database with the given settings. */
function serve(database: TestDatabase, env: Record<string, string> = {}): Promise<RunningService> {
  return startService(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      OPS_USERNAME: 'ops',
      OPS_PASSWORD: 'ops-password-for-tests',
      LOG_LEVEL: 'silent',
      ...env,
    }),
  );
}

const sessionFor = (url: string, credentials: { client_id: string; client_secret: string }, redirectUri?: string) =>
  request(url, '/connect/sessions', json({ customer_id: randomUUID(), customer_name: 'Acme', products: ['company'], redirect_uri: redirectUri }, basic({ ...credentials, name: '', redirect_uris: [], allowed_origins: [], sandbox: true })));

describeWithPostgres('registering applications', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  describe('npm run cli -- applications create', () => {
    it('prints credentials that work, and stores only a slow hash of the secret', async () => {
      const result = await cli(
        ['applications', 'create', '--name', 'Benefits Platform', '--redirect-uri', 'https://platform.example/cb', '--redirect-uri', 'http://localhost:4000/cb', '--sandbox'],
        { DATABASE_URL: database.url },
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const credentials = JSON.parse(result.stdout);
      expect(credentials).toEqual({
        client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        client_secret: expect.stringMatching(/^\S{32,}$/),
        name: 'Benefits Platform',
        redirect_uris: ['https://platform.example/cb', 'http://localhost:4000/cb'],
        // No --origin: the origins of the redirect URIs.
        allowed_origins: ['https://platform.example', 'http://localhost:4000'],
        sandbox: true,
      });

      const service = await serve(database);
      try {
        const [row] = await service.app.get(DataSource).query(`SELECT secret_hash FROM applications WHERE id = $1`, [credentials.client_id]);
        expect(row.secret_hash).toMatch(/^\$argon2id\$/);
        expect(row.secret_hash).not.toContain(credentials.client_secret);
        expect((await sessionFor(service.url, credentials, 'http://localhost:4000/cb')).status).toBe(201);
        expect((await sessionFor(service.url, { ...credentials, client_secret: 'wrong-secret-wrong' })).status).toBe(401);
      } finally {
        await service.close();
      }
    });

    it('runs as the README says, through npm', async () => {
      const result = await runCommand('npm', ['run', '--silent', 'cli', '--', 'applications', 'create', '--name', 'Via npm'], { DATABASE_URL: database.url });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ name: 'Via npm', redirect_uris: [], sandbox: false });
    });

    it.each([
      [[], /unknown command/],
      [['applications', 'delete'], /unknown command/],
      [['applications', 'create'], /--name is required/],
      [['applications', 'create', '--name', '   '], /--name is required/],
      [['applications', 'create', '--name', 'A', '--colour', 'red'], /Unknown option '--colour'/],
      [['applications', 'create', '--name', 'A', '--redirect-uri', 'not a url'], /is not a URL/],
      [['applications', 'create', '--name', 'A', '--redirect-uri', 'ftp://files.example/cb'], /must be an http or https URL/],
      [['applications', 'create', '--name', 'A', '--redirect-uri', 'https://a.example/cb#frag'], /must not have a fragment/],
      [['applications', 'create', '--name', 'A', '--origin', 'https://a.example/cb'], /--origin https:\/\/a\.example\/cb must not have a path, query or fragment/],
      [['applications', 'create', '--name', 'A', '--origin', 'https://a.example?x'], /must not have a path, query or fragment/],
      [['applications', 'create', '--name', 'A', '--origin', 'javascript:alert(1)'], /--origin javascript:alert\(1\) must use http or https/],
      [['applications', 'create', '--name', 'A', '--origin', 'data:text/html,hi'], /must use http or https/],
      [['applications', 'create', '--name', 'A', '--origin', '*'], /--origin \* is not a URL/],
      [['applications', 'create', '--name', 'A', '--origin', 'https://a.example', '--origin', 'null'], /--origin null is not a URL/],
      [['applications', 'create', '--name', 'A', '--client-id', randomUUID()], /--client-id is for update/],
      [['applications', 'update'], /--client-id is required/],
      [['applications', 'update', '--client-id', randomUUID()], /nothing to update/],
      [['applications', 'update', '--client-id', randomUUID(), '--sandbox'], /--sandbox is chosen at create/],
      [['applications', 'update', '--client-id', randomUUID(), '--origin', 'ftp://a.example'], /must use http or https/],
      [['applications', 'update', '--client-id', randomUUID(), '--name', ' '], /--name is required/],
    ])('refuses %j with usage and exit code 2, storing nothing', async (args, message) => {
      const before = await countApplications(database);
      const result = await cli(args, { DATABASE_URL: database.url });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(/usage: npm run cli -- applications create/);
      expect(result.stdout).toBe('');
      expect(await countApplications(database)).toBe(before);
    });

    it('registers the origins given with --origin, as the browser writes them', async () => {
      const result = await cli(
        ['applications', 'create', '--name', 'Embedded', '--redirect-uri', 'https://platform.example/cb', '--origin', 'HTTPS://App.Example.com:443/', '--origin', 'http://localhost:5173', '--origin', 'https://app.example.com'],
        { DATABASE_URL: database.url },
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ redirect_uris: ['https://platform.example/cb'], allowed_origins: ['https://app.example.com', 'http://localhost:5173'] });
    });

    it('update replaces what it is given and keeps the rest; an unknown client_id changes nothing', async () => {
      const created = JSON.parse(
        (await cli(['applications', 'create', '--name', 'Before', '--redirect-uri', 'https://platform.example/cb', '--sandbox'], { DATABASE_URL: database.url })).stdout,
      );
      const updated = await cli(['applications', 'update', '--client-id', created.client_id, '--origin', 'https://app.example.com/', '--origin', 'http://localhost:5173'], {
        DATABASE_URL: database.url,
      });
      expect(updated.stderr).toBe('');
      expect(updated.code).toBe(0);
      expect(JSON.parse(updated.stdout)).toEqual({
        client_id: created.client_id,
        name: 'Before',
        redirect_uris: ['https://platform.example/cb'],
        allowed_origins: ['https://app.example.com', 'http://localhost:5173'],
        sandbox: true,
      });
      expect(updated.stdout).not.toContain(created.client_secret);

      const renamed = await cli(['applications', 'update', '--client-id', created.client_id, '--name', 'After', '--redirect-uri', 'https://other.example/cb'], {
        DATABASE_URL: database.url,
      });
      expect(JSON.parse(renamed.stdout)).toMatchObject({ name: 'After', redirect_uris: ['https://other.example/cb'], allowed_origins: ['https://app.example.com', 'http://localhost:5173'] });

      const unknown = await cli(['applications', 'update', '--client-id', randomUUID(), '--origin', 'https://app.example.com'], { DATABASE_URL: database.url });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/No application has client_id/);
      expect(unknown.stdout).toBe('');
    });

    it('names a bad setting instead of failing with a stack trace', async () => {
      const result = await cli(['applications', 'create', '--name', 'A'], { DATABASE_URL: 'mysql://nope' });
      expect(result.code).toBe(78);
      expect(result.stderr).toMatch(/DATABASE_URL/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });
  });

  describe('APP_CLIENT_ID / APP_CLIENT_SECRET / APP_REDIRECT_URIS / APP_ORIGINS at start', () => {
    const clientId = randomUUID();
    const settings = { APP_CLIENT_ID: clientId, APP_CLIENT_SECRET: 'first-secret-0123456789', APP_REDIRECT_URIS: 'https://a.example/cb' };

    it('creates the application once and updates it when the settings change', async () => {
      const before = await countApplications(database);
      for (let start = 0; start < 2; start++) {
        const service = await serve(database, settings);
        try {
          expect((await sessionFor(service.url, { client_id: clientId, client_secret: settings.APP_CLIENT_SECRET }, 'https://a.example/cb')).status).toBe(201);
        } finally {
          await service.close();
        }
      }
      expect(await countApplications(database)).toBe(before + 1);

      const changed = { ...settings, APP_CLIENT_SECRET: 'second-secret-0123456789', APP_REDIRECT_URIS: 'https://b.example/cb,https://c.example/cb' };
      const service = await serve(database, changed);
      try {
        expect((await sessionFor(service.url, { client_id: clientId, client_secret: settings.APP_CLIENT_SECRET })).status).toBe(401);
        expect((await sessionFor(service.url, { client_id: clientId, client_secret: changed.APP_CLIENT_SECRET }, 'https://a.example/cb')).status).toBe(400);
        expect((await sessionFor(service.url, { client_id: clientId, client_secret: changed.APP_CLIENT_SECRET }, 'https://c.example/cb')).status).toBe(201);
      } finally {
        await service.close();
      }
      expect(await countApplications(database)).toBe(before + 1);
    });

    it('registers APP_ORIGINS, normalized; unset, the origins of APP_REDIRECT_URIS', async () => {
      const id = randomUUID();
      const base = { APP_CLIENT_ID: id, APP_CLIENT_SECRET: 'origins-secret-0123456789', APP_REDIRECT_URIS: 'https://a.example/cb,https://b.example:8443/cb' };
      const originsAfterStart = async (env: Record<string, string>) => {
        const service = await serve(database, env);
        try {
          const [row] = await service.app.get(DataSource).query(`SELECT allowed_origins FROM applications WHERE id = $1`, [id]);
          return row.allowed_origins;
        } finally {
          await service.close();
        }
      };
      expect(await originsAfterStart(base)).toEqual(['https://a.example', 'https://b.example:8443']);
      expect(await originsAfterStart({ ...base, APP_ORIGINS: 'HTTPS://App.Example.com/, http://localhost:5173' })).toEqual([
        'https://app.example.com',
        'http://localhost:5173',
      ]);
      expect(loadConfig({ APP_ORIGINS: 'http://[::1]:8080,https://app.example.com' }).appOrigins).toEqual(['http://[::1]:8080', 'https://app.example.com']);
    });

    it.each([
      [{ APP_CLIENT_ID: 'not-a-uuid', APP_CLIENT_SECRET: 'first-secret-0123456789' }, /APP_CLIENT_ID/],
      [{ APP_CLIENT_ID: randomUUID() }, /APP_CLIENT_SECRET/],
      [{ APP_CLIENT_ID: randomUUID(), APP_CLIENT_SECRET: 'short' }, /APP_CLIENT_SECRET/],
      [{ APP_CLIENT_ID: randomUUID(), APP_CLIENT_SECRET: 'first-secret-0123456789', APP_REDIRECT_URIS: 'nope' }, /APP_REDIRECT_URIS/],
      [{ APP_ORIGINS: 'https://app.example.com/path' }, /APP_ORIGINS must be a comma-separated list of origins .*: https:\/\/app\.example\.com\/path must not have a path/],
      [{ APP_ORIGINS: 'https://app.example.com,javascript:alert(1)' }, /APP_ORIGINS .*javascript:alert\(1\) must use http or https/],
      [{ APP_ORIGINS: 'data:text/html,x' }, /APP_ORIGINS .*must use http or https/],
      [{ APP_ORIGINS: '*' }, /APP_ORIGINS .*\* is not a URL/],
      [{ APP_ORIGINS: ' , ' }, /APP_ORIGINS must be a comma-separated list of origins/],
    ])('refuses %j at start', (env, message) => {
      expect(() => loadConfig({ ...env })).toThrow(message);
    });
  });
});

describeWithPostgres('a demo application from before origins were registered', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it("gets the service's own origin at the next start, and keeps origins it already has", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bo-demo-origins-'));
    const service = await serve(database);
    try {
      const applications = service.app.get(ApplicationsService);
      // What the migration leaves a demo application with: no redirect URIs, so no origins.
      const { client_secret: _, ...stored } = await applications.create({ name: 'Sandbox demo application', redirectUris: [], sandbox: true });
      expect(stored.allowed_origins).toEqual([]);
      writeFileSync(join(dataDir, 'demo-application.json'), JSON.stringify({ ...stored, client_secret: 'kept', allowed_origins: undefined }));
      const restart = async () => {
        const bootstrap = new ApplicationsBootstrap(loadConfig({ EMBEDDED_DATA_DIR: dataDir, PORT: '3000', HOST: '0.0.0.0' }), applications);
        await bootstrap.onApplicationBootstrap();
        return bootstrap.startupApplication;
      };
      expect(await restart()).toMatchObject({ source: 'demo', credentials: { client_id: stored.client_id, allowed_origins: ['http://127.0.0.1:3000'] } });
      expect((await applications.find(stored.client_id))?.allowedOrigins).toEqual(['http://127.0.0.1:3000']);

      await applications.update(stored.client_id, { allowedOrigins: ['http://localhost:5173'] });
      expect((await restart())?.credentials.allowed_origins).toEqual(['http://localhost:5173']);
    } finally {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

async function countApplications(database: TestDatabase): Promise<number> {
  const dataSource = new DataSource({ type: 'postgres', url: database.url });
  await dataSource.initialize();
  try {
    const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM applications`);
    return n;
  } finally {
    await dataSource.destroy();
  }
}

describe('the embedded default', () => {
  it('creates a sandbox demo application, prints how to use it, and keeps it across restarts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bo-demo-'));
    const start = () => runUntilListening({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', EMBEDDED_DATA_DIR: dataDir });
    try {
      const first = await start();
      const clientId = /application \(sandbox demo\): client_id (\S+)/.exec(first.output)?.[1];
      const clientSecret = /client_secret (\S+)/.exec(first.output)?.[1];
      const connectPage = /connect page: (\S+)/.exec(first.output)?.[1];
      expect(clientId).toMatch(/^[0-9a-f-]{36}$/);
      expect(clientSecret).toBeDefined();
      expect(first.output).toMatch(/sandbox sign-in: good_user \/ good_pass/);
      // Every product the sandbox offers, so the loop reaches payments and pay statements.
      expect(new URL(connectPage!).searchParams.get('products')!.split(' ').sort()).toEqual(
        ['benefits', 'company', 'directory', 'employment', 'individual', 'pay_statement', 'payment'],
      );
      // The exact next command: the exchange without redirect_uri, the demo having none.
      const exchange = /(curl -s \S+\/auth\/token .*)$/m.exec(first.output)?.[1];
      expect(exchange).toBe(
        `curl -s ${first.url}/auth/token -H 'content-type: application/json' -d '${JSON.stringify({ client_id: clientId, client_secret: clientSecret, code: 'CODE_FROM_THE_PAGE' })}'`,
      );
      expect(statSync(join(dataDir, 'demo-application.json')).mode & 0o077).toBe(0);
      // One registered origin, the service's own (as configured: PORT=0 here), which the
      // embedded flow takes by default, so the printed link works as it is.
      const demoOrigin = 'http://127.0.0.1:0';
      expect(JSON.parse(readFileSync(join(dataDir, 'demo-application.json'), 'utf8')).allowed_origins).toEqual([demoOrigin]);
      try {
        // The printed link starts the connect flow, and the printed credentials open sessions.
        const authorize = await fetch(connectPage!, { redirect: 'manual' });
        expect(authorize.status).toBe(303);
        expect(authorize.headers.get('location')).toMatch(/\/connect\?session=/);
        expect(new URL(authorize.headers.get('location')!).searchParams.get('origin')).toBe(demoOrigin);
        const page = await fetch(authorize.headers.get('location')!);
        expect(page.status).toBe(200);
        expect((await sessionFor(first.url, { client_id: clientId!, client_secret: clientSecret! })).status).toBe(201);
      } finally {
        await first.stop();
      }
      const second = await start();
      await second.stop();
      expect(second.output).toContain(`client_id ${clientId}`);
      expect(second.output).toContain(`client_secret ${clientSecret}`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});

/** Starts the service, waits for its start-up report, and gives a way to stop it. */
async function runUntilListening(env: Record<string, string>) {
  const service = startEntry('main', [], { env });
  const { child, exited } = service;
  await service.waitFor(/connect page: /, 90_000);
  const output = service.output();
  const url = /listening on (\S+)/.exec(output)?.[1];
  if (!url) {
    child.kill('SIGKILL');
    throw new Error(`the service did not start:\n${output}`);
  }
  return {
    url,
    output,
    stop: async () => {
      child.kill('SIGTERM');
      const exit = await exited;
      // The output says why when it did not stop cleanly (a signal, a failed shutdown).
      expect({ ...exit, output: exit.code === 0 ? '' : service.output().slice(-3000) }).toEqual({ code: 0, signal: null, output: '' });
    },
  };
}
