import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { RunningService, startService } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { DataDirLockedError } from '../../src/infrastructure/database/data-dir-lock';
import { EmbeddedPostgres } from '../../src/infrastructure/database/embedded-postgres';
import { runCommand, runEntry } from '../utils/child-process';

/** Runs an entry point of this project to its end and collects what it printed. */
const run = (entry: 'main' | 'cli', args: string[], env: Record<string, string>) => runEntry(entry, args, { LOG_LEVEL: 'warn', ...env });

/**
 * The embedded database belongs to one process at a time: a second service or the CLI on the
 * same data directory is refused with the holder's pid, and nothing the holder wrote is lost.
 */
// Each test opens the embedded database (PostgreSQL in WebAssembly) in up to three processes, each
// seconds of CPU: on a busy machine that is minutes.
describe('the embedded data directory lock', () => {
  jest.setTimeout(240_000);

  let dataDir: string;
  let service: RunningService | undefined;
  const start = () => startService(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', EMBEDDED_DATA_DIR: dataDir }));
  const applicationIds = async (of: RunningService) =>
    (await of.app.get(DataSource).query(`SELECT id FROM applications ORDER BY id`)).map((r: { id: string }) => r.id);

  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'bo-lock-e2e-'))));
  afterEach(async () => {
    await service?.close();
    service = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a second opener in this process, the CLI and a second service, naming the holder', async () => {
    service = await start();
    const before = await applicationIds(service);
    expect(before.length).toBeGreaterThan(0); // the sandbox demo application

    await expect(EmbeddedPostgres.start(dataDir)).rejects.toThrow(DataDirLockedError);

    const cli = await run('cli', ['applications', 'create', '--name', 'Second writer'], { EMBEDDED_DATA_DIR: dataDir });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(new RegExp(`in use by process ${process.pid} `));
    expect(cli.stderr).toMatch(/Stop that process first/);
    expect(cli.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(cli.stdout).not.toMatch(/client_secret/); // no credentials that would never work

    const second = await run('main', [], { EMBEDDED_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`failed to start: The embedded database in .* is in use by process ${process.pid} `));

    // The holder still works, and what it had is all there.
    expect((await service.app.get(DataSource).query('SELECT 1 AS one'))[0].one).toBe(1);
    expect(await applicationIds(service)).toEqual(before);
  });

  it('is released on stop: the CLI then writes, and the service sees it after a restart', async () => {
    service = await start();
    const before = await applicationIds(service);
    await service.close();
    service = undefined;

    const cli = await run('cli', ['applications', 'create', '--name', 'After stop'], { EMBEDDED_DATA_DIR: dataDir });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const created = JSON.parse(cli.stdout) as { client_id: string };

    service = await start();
    expect(await applicationIds(service)).toEqual([...before, created.client_id].sort());
  });

  it('is taken over from a process that died without releasing it (kill -9)', async () => {
    service = await start();
    const before = await applicationIds(service);
    await service.close();
    service = undefined;
    // What a killed holder leaves: its lock file, naming a pid that no longer runs.
    const gone = await runCommand(process.execPath, ['-e', '']);
    writeFileSync(join(dataDir, 'owner.lock'), JSON.stringify({ pid: gone.pid, host: hostname(), command: 'node dist/main.js', since: new Date().toISOString() }));

    service = await start();
    expect(await applicationIds(service)).toEqual(before);
  });
});
