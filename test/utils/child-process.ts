import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { EXIT_WITH_PARENT, trackChild, ServiceExit } from '../../bench/service-child';
import { transpiledEntry } from '../../bench/transpiled-service';

const root = resolve(__dirname, '../..');

export interface RunningChild {
  child: ChildProcess;
  pid: number;
  /** Settled when the process has exited (never rejects). */
  exited: Promise<ServiceExit>;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr as they came. */
  output(): string;
  /** Resolves once the output matches `pattern`, or the process exited, or `timeoutMs` passed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<boolean>;
}

export interface ChildOptions {
  /** The whole environment of the child, but for PATH and HOME, which it always gets. */
  env?: Record<string, string>;
  /** Node flags before the script (e.g. START_NODE_ARGS). */
  nodeArgs?: readonly string[];
}

/**
 * Starts a command in the project's root, its output collected. The child is killed when this
 * process goes, even when it is killed itself (stdin is a pipe that the child watches; see
 * bench/exit-with-parent.js), so a test that fails or times out leaves nothing running.
 */
export function startChild(command: string, args: readonly string[], { env = {} }: Pick<ChildOptions, 'env'> = {}): RunningChild {
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...(process.env.HOME && { HOME: process.env.HOME }), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout!.on('data', (d) => ((stdout += d), (output += d)));
  child.stderr!.on('data', (d) => ((stderr += d), (output += d)));
  let done = false;
  const exited = trackChild(child, (error) => (output += `\n${error.message}`)).then((exit) => {
    done = true;
    return exit;
  });
  return {
    child,
    pid: child.pid ?? -1,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => output,
    waitFor: async (pattern, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output) && !done && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      return pattern.test(output);
    },
  };
}

/**
 * Runs one of the service's entry points (`main`: the service, `cli`: the admin CLI) from its
 * transpiled JavaScript (bench/transpiled-service.ts) in a child process.
 */
export function startEntry(entry: 'main' | 'cli', args: readonly string[] = [], options: ChildOptions = {}): RunningChild {
  return startChild(process.execPath, [...(options.nodeArgs ?? []), ...EXIT_WITH_PARENT, ...transpiledEntry(entry), ...args], options);
}

export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  pid: number;
}

/** Runs an entry point to its end and collects what it printed. */
export async function runEntry(entry: 'main' | 'cli', args: readonly string[], env: Record<string, string> = {}): Promise<ChildResult> {
  return resultOf(startEntry(entry, args, { env }));
}

/** Runs a command to its end and collects what it printed. */
export async function runCommand(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<ChildResult> {
  return resultOf(startChild(command, args, { env }));
}

async function resultOf(running: RunningChild): Promise<ChildResult> {
  const { code } = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr(), pid: running.pid };
}
