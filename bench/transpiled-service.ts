/**
 * The service's sources as plain JavaScript, for the child processes of the tests and the fault
 * suite. Each child used to run src/main.ts under ts-node (transpile-only), which loads the
 * TypeScript compiler and transpiles some 370 files in every child before it can start: seconds
 * of CPU for each of the many children a test run starts and kills. Here they are transpiled once
 * into `.transpiled/` (one level below the root, as dist/ is, so `require('../package.json')` and
 * the dashboard's asset fallback resolve the same), with TypeScript's `transpileModule`: the same
 * output ts-node's transpile-only mode gives, no type check (`npm run typecheck` does that).
 * A later call redoes only the files changed since, so an edited source is never run stale.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '..');
const SOURCE = join(ROOT, 'src');
export const TRANSPILED_DIR = join(ROOT, '.transpiled');

let compilerOptions: ts.CompilerOptions | undefined;

function options(): ts.CompilerOptions {
  if (compilerOptions) return compilerOptions;
  const file = join(ROOT, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(file, ts.sys.readFile).config, ts.sys, ROOT, undefined, file);
  // Source maps inline, so a stack trace names the .ts line without map files to keep in step.
  compilerOptions = { ...parsed.options, sourceMap: false, inlineSourceMap: true, inlineSources: true, incremental: false, tsBuildInfoFile: undefined };
  return compilerOptions;
}

function sourceFiles(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, into);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')) into.push(path);
  }
  return into;
}

function outputFiles(dir: string, into: string[] = []): string[] {
  if (!existsSync(dir)) return into;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) outputFiles(path, into);
    else into.push(path);
  }
  return into;
}

export interface TranspileReport {
  dir: string;
  transpiled: number;
  removed: number;
  ms: number;
}

/**
 * Brings `.transpiled/` up to date with src/ (or `to` with `from`): transpiles each source newer than its output and
 * removes outputs whose source is gone. Safe to run from several processes at once: every file is
 * written beside its place and renamed over it.
 */
export function transpileService(from: string = SOURCE, to: string = TRANSPILED_DIR): TranspileReport {
  const started = Date.now();
  const sources = sourceFiles(from);
  const expected = new Set<string>();
  let transpiled = 0;
  for (const source of sources) {
    const output = join(to, relative(from, source)).replace(/\.ts$/, '.js');
    expected.add(output);
    const outputTime = existsSync(output) ? statSync(output).mtimeMs : -1;
    if (outputTime >= statSync(source).mtimeMs) continue;
    const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), { compilerOptions: options(), fileName: source });
    mkdirSync(dirname(output), { recursive: true });
    const temporary = `${output}.${process.pid}.tmp`;
    writeFileSync(temporary, outputText);
    renameSync(temporary, output);
    transpiled++;
  }
  let removed = 0;
  for (const output of outputFiles(to)) {
    if (expected.has(output) || output.endsWith('.tmp')) continue;
    rmSync(output, { force: true });
    removed++;
  }
  return { dir: to, transpiled, removed, ms: Date.now() - started };
}

let upToDate = false;

/**
 * The node arguments that run one of the service's entry points (`main`: the service, `cli`: the
 * admin CLI) from `.transpiled/`, brought up to date first (once per process). Stack traces name
 * the .ts lines with TEST_SOURCE_MAPS=true: off by default, as reading the maps costs each child
 * about a third more CPU to start (1.8 s against 1.3 s).
 */
export function transpiledEntry(entry: 'main' | 'cli'): string[] {
  if (!upToDate) {
    transpileService();
    upToDate = true;
  }
  const sourceMaps = /^(1|true|yes)$/i.test(process.env.TEST_SOURCE_MAPS ?? '') ? ['--enable-source-maps'] : [];
  return [...sourceMaps, join(TRANSPILED_DIR, `${entry}.js`)];
}
