import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** What the lock file holds: who owns the embedded data directory. */
interface LockOwner {
  pid: number;
  host: string;
  command: string;
  since: string;
}

/** A second process (service or CLI) opened an embedded data directory another one holds. */
export class DataDirLockedError extends Error {
  constructor(
    readonly directory: string,
    readonly owner: LockOwner,
  ) {
    super(
      `The embedded database in ${directory} is in use by process ${owner.pid}${owner.host === hostname() ? '' : ` on ${owner.host}`} ` +
        `(${owner.command}, since ${owner.since}). One process at a time may open it: two would overwrite each other's ` +
        `writes. Stop that process first, or use its API; to run several processes, set DATABASE_URL to a PostgreSQL server.`,
    );
    this.name = 'DataDirLockedError';
  }
}

const LOCK_FILE = 'owner.lock';

/**
 * An exclusive lock on a data directory for this process, as PostgreSQL's postmaster.pid does:
 * a file created only if absent, naming the owner's pid. A file left by a process that is gone
 * (a crash, `kill -9`) is taken over; one whose process runs is refused with its pid.
 */
export class DataDirLock {
  private released = false;
  private readonly releaseOnExit = () => this.release();

  private constructor(private readonly file: string) {
    process.once('exit', this.releaseOnExit);
  }

  static acquire(directory: string): DataDirLock {
    const file = join(directory, LOCK_FILE);
    const owner: LockOwner = {
      pid: process.pid,
      host: hostname(),
      command: process.argv.slice(1, 3).map((part) => part.split('/').slice(-2).join('/')).join(' ') || 'node',
      since: new Date().toISOString(),
    };
    // Two attempts: the second after clearing a lock whose owner is gone.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(file, `${JSON.stringify(owner)}\n`, { flag: 'wx', mode: 0o600 });
        return new DataDirLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const current = readOwner(file);
      if (current !== undefined && isAlive(current)) throw new DataDirLockedError(directory, current);
      removeIfUnchanged(file, current);
    }
    const current = readOwner(file);
    throw new DataDirLockedError(directory, current ?? { pid: 0, host: 'unknown', command: 'unknown', since: 'unknown' });
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.releaseOnExit);
    try {
      const owner = readOwner(this.file);
      if (owner?.pid === process.pid && owner.host === hostname()) unlinkSync(this.file);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    return typeof parsed.pid === 'number' ? (parsed as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the owner still runs. On another host it cannot be told, so it counts as running.
 * A pid reused by an unrelated program after a reboot is told apart where /proc shows it.
 */
function isAlive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return /node|ts-node|npm/.test(readFileSync(`/proc/${owner.pid}/cmdline`, 'utf8'));
  } catch {
    return true;
  }
}

/** Removes a stale lock unless another process replaced it meanwhile. */
function removeIfUnchanged(file: string, stale: LockOwner | undefined): void {
  const now = readOwner(file);
  if (JSON.stringify(now) !== JSON.stringify(stale)) return;
  try {
    unlinkSync(file);
  } catch {
    // Someone else cleared it first; the next attempt decides.
  }
}
