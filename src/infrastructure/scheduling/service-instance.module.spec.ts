import { hostname } from 'node:os';
import { ConfigError, loadConfig } from '../../config/app-config';
import { serviceInstanceSettings } from './service-instance.module';

function problemsOf(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.join('\n');
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const POSTGRES = { DATABASE_URL: 'postgres://u@db:5432/benefits', OPS_PASSWORD: 'correct horse battery' };

describe('service instance settings', () => {
  it('names the instance by INSTANCE_ID, else by host and port, so a restart is called the same', () => {
    expect(serviceInstanceSettings(loadConfig({ ...POSTGRES, INSTANCE_ID: 'worker-1' })).name).toBe('worker-1');
    expect(serviceInstanceSettings(loadConfig({ ...POSTGRES, PORT: '8080' })).name).toBe(`${hostname()}:8080`);
    expect(serviceInstanceSettings(loadConfig({ ...POSTGRES, PORT: '8080' })).name).toBe(serviceInstanceSettings(loadConfig({ ...POSTGRES, PORT: '8080' })).name);
  });

  it('makes a process on port 0 a new instance each time', () => {
    const names = [1, 2].map(() => serviceInstanceSettings(loadConfig({ ...POSTGRES, PORT: '0' })).name);
    expect(names[0]).not.toBe(names[1]);
  });

  it('treats every earlier instance on the embedded database as its past, and none on a shared one', () => {
    expect(serviceInstanceSettings(loadConfig({})).soleUser).toBe(true);
    expect(serviceInstanceSettings(loadConfig(POSTGRES)).soleUser).toBe(false);
  });

  it('beats every 2 s and takes an instance for gone after 10 s by default; job leases last 30 s', () => {
    const config = loadConfig({});
    expect(serviceInstanceSettings(config)).toMatchObject({ heartbeatMs: 2_000, deadAfterMs: 10_000 });
    expect(config.JOB_LEASE_MS).toBe(30_000);
  });

  it('refuses a dead bound shorter than three heartbeats, and malformed settings', () => {
    expect(problemsOf({ INSTANCE_HEARTBEAT_MS: '1000', INSTANCE_DEAD_AFTER_MS: '2999' })).toMatch(
      /INSTANCE_DEAD_AFTER_MS must be at least three INSTANCE_HEARTBEAT_MS/,
    );
    expect(loadConfig({ INSTANCE_HEARTBEAT_MS: '1000', INSTANCE_DEAD_AFTER_MS: '3000' }).INSTANCE_DEAD_AFTER_MS).toBe(3_000);
    expect(problemsOf({ INSTANCE_HEARTBEAT_MS: '10' })).toMatch(/INSTANCE_HEARTBEAT_MS must be a whole number of milliseconds from 50 to 60000/);
    expect(problemsOf({ INSTANCE_DEAD_AFTER_MS: 'soon' })).toMatch(/INSTANCE_DEAD_AFTER_MS must be a whole number/);
    expect(problemsOf({ INSTANCE_ID: 'has space' })).toMatch(/INSTANCE_ID may hold/);
    expect(problemsOf({ INSTANCE_ID: 'a/b' })).toMatch(/INSTANCE_ID may hold/);
  });
});
