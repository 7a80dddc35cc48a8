import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLock, DataDirLockedError } from './data-dir-lock';

describe('DataDirLock', () => {
  let directory: string;
  const lockFile = () => join(directory, 'owner.lock');
  beforeEach(() => (directory = mkdtempSync(join(tmpdir(), 'bo-lock-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  /** A pid that ran and is gone. */
  const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

  it('records the owner and removes the file on release', () => {
    const lock = DataDirLock.acquire(directory);
    expect(JSON.parse(readFileSync(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
    expect(existsSync(lockFile())).toBe(false);
    DataDirLock.acquire(directory).release();
  });

  it('refuses a second holder while the first runs, naming its pid', () => {
    const lock = DataDirLock.acquire(directory);
    try {
      expect(() => DataDirLock.acquire(directory)).toThrow(DataDirLockedError);
      expect(() => DataDirLock.acquire(directory)).toThrow(new RegExp(`in use by process ${process.pid} `));
    } finally {
      lock.release();
    }
  });

  it('takes over a lock whose process is gone, and an unreadable one', () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: deadPid(), host: hostname(), command: 'node dist/main.js', since: '2026-01-01T00:00:00Z' }));
    const lock = DataDirLock.acquire(directory);
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
    writeFileSync(lockFile(), 'not json');
    DataDirLock.acquire(directory).release();
  });

  it('counts an owner on another host as running: its pid cannot be checked from here', () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: deadPid(), host: 'another-host', command: 'node dist/main.js', since: '2026-01-01T00:00:00Z' }));
    expect(() => DataDirLock.acquire(directory)).toThrow(/on another-host/);
  });

  it('leaves a lock another process took alone when releasing', () => {
    const lock = DataDirLock.acquire(directory);
    writeFileSync(lockFile(), JSON.stringify({ pid: 1, host: 'another-host', command: 'x', since: 'now' }));
    lock.release();
    expect(existsSync(lockFile())).toBe(true);
  });
});
