import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_WITH_PARENT } from '../../../bench/service-child';
import { transpileService } from '../../../bench/transpiled-service';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return condition();
}

/**
 * The test run's own machinery: the children a suite starts go with it however it ends, and the
 * service's transpiled copy is never stale.
 */
describe('a child started with EXIT_WITH_PARENT', () => {
  const forever = ['-e', 'setInterval(() => {}, 1000)'];

  it('exits when its parent is killed with SIGKILL (no exit handler of the parent runs)', async () => {
    const parentScript = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, ${JSON.stringify([...EXIT_WITH_PARENT, ...forever])}, { stdio: ['pipe', 'ignore', 'ignore'] });
      console.log(child.pid);
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['-e', parentScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    const childPid = await new Promise<number>((done) => parent.stdout!.once('data', (d) => done(Number(String(d).trim()))));
    try {
      expect(alive(childPid)).toBe(true);
      parent.kill('SIGKILL');
      expect(await until(() => !alive(childPid), 10_000)).toBe(true);
    } finally {
      if (alive(childPid)) process.kill(childPid, 'SIGKILL');
      parent.kill('SIGKILL');
    }
  });

  it('lives on while its parent does, and is not kept alive by the watch once its work is done', async () => {
    const child = spawn(process.execPath, [...EXIT_WITH_PARENT, '-e', 'setTimeout(() => console.log("done"), 300)'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect({ code, output: output.trim() }).toEqual({ code: 0, output: 'done' });
  });

  it('ignores a stdin that is not a pipe from the parent', async () => {
    const child = spawn(process.execPath, [...EXIT_WITH_PARENT, ...forever], { stdio: ['ignore', 'ignore', 'ignore'] });
    try {
      await new Promise((r) => setTimeout(r, 1_000));
      expect(alive(child.pid!)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('transpileService', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'bo-transpile-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('transpiles what changed since the last call, removes what lost its source, and skips specs', () => {
    const src = join(dir, 'src');
    const out = join(dir, 'out');
    mkdirSync(join(src, 'nested'), { recursive: true });
    writeFileSync(join(src, 'a.ts'), 'export const a: number = 1;\n');
    writeFileSync(join(src, 'nested/b.ts'), "import { a } from '../a';\nexport const b = a + 1;\n");
    writeFileSync(join(src, 'a.spec.ts'), 'it("x", () => undefined);\n');

    expect(transpileService(src, out)).toMatchObject({ transpiled: 2, removed: 0 });
    expect(readFileSync(join(out, 'a.js'), 'utf8')).toMatch(/exports\.a = 1/);
    expect(existsSync(join(out, 'a.spec.js'))).toBe(false);
    // Nothing changed: nothing redone.
    expect(transpileService(src, out)).toMatchObject({ transpiled: 0, removed: 0 });

    writeFileSync(join(src, 'a.ts'), 'export const a: number = 2;\n');
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(src, 'a.ts'), later, later);
    rmSync(join(src, 'nested/b.ts'));
    expect(transpileService(src, out)).toMatchObject({ transpiled: 1, removed: 1 });
    expect(readFileSync(join(out, 'a.js'), 'utf8')).toMatch(/exports\.a = 2/);
    expect(existsSync(join(out, 'nested/b.js'))).toBe(false);
  });
});
