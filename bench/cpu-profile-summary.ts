/**
 * Where a V8 CPU profile (`node --cpu-prof`, e.g. the service under BENCH_CPU_PROF=<dir>)
 * spent its time: self time by package (or by file of this project), total time under each
 * (callees included: e.g. everything a middleware package calls), the functions with the most
 * self time, and total time of this project's own functions.
 *
 *   npx ts-node --transpile-only bench/cpu-profile-summary.ts <file.cpuprofile> [top=25] [from_s] [to_s]
 *
 * from_s / to_s keep the samples between those seconds of the profile (e.g. the load, without
 * start-up); the busy-time timeline printed first shows where the load was.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The project's own code, compiled or not; a dependency's `dist/` or `src/` is not. */
export const isOwnCode = (url: string) => !url.includes('/node_modules/') && /\/(dist|src)\//.test(url);

/** `node_modules/<package>` for dependencies, the project-relative file for our own code. */
function ownerOf(url: string): string {
  if (url === '') return '(native / V8)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  if (url.startsWith('node:')) return 'node internals';
  const own = /\/(dist|src)\/(.+)$/.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

export function summarize(profile: Profile, top = 25, fromSeconds = 0, toSeconds = Infinity): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfMicros = new Map<number, number>();
  const busyPerSecond: number[] = [];
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    const second = Math.floor(at / 1e6);
    if (byId.get(id)!.callFrame.functionName !== '(idle)') busyPerSecond[second] = (busyPerSecond[second] ?? 0) + delta;
    if (at >= fromSeconds * 1e6 && at < toSeconds * 1e6) selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
  });
  const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusiveOwn = new Map<string, number>();
  const inclusiveOwner = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    const owner = ownerOf(url);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + micros);
    const name = `${functionName || '(anonymous)'} ${owner}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    // Total (inclusive) time: each sample counts once per distinct owner, and once per distinct
    // frame of the project's own code, on its stack.
    const seen = new Set<string>();
    const owners = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const frameOwner = ownerOf(frame.url);
      if (frame.url !== '' && !owners.has(frameOwner)) {
        owners.add(frameOwner);
        inclusiveOwner.set(frameOwner, (inclusiveOwner.get(frameOwner) ?? 0) + micros);
      }
      if (!isOwnCode(frame.url)) continue;
      const key = `${frame.functionName || '(anonymous)'} ${ownerOf(frame.url)}:${frame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusiveOwn.set(key, (inclusiveOwn.get(key) ?? 0) + micros);
    }
  }
  const share = (micros: number) => `${((micros / total) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms`;
  const list = (title: string, entries: Map<string, number>) =>
    [title, ...[...entries].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, micros]) => `  ${share(micros)}  ${name}`)].join('\n');
  const timeline = [...busyPerSecond].map((micros, second) => `${second}s:${Math.round((micros ?? 0) / 1e4)}%`).join(' ');
  return [
    `profile: ${(total / 1e6).toFixed(1)} s of samples kept (${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s wall)`,
    `busy share per second: ${timeline}`,
    list('self time by package / file:', byOwner),
    list('total time under each package / file (callees included):', inclusiveOwner),
    list('self time by function:', byFunction),
    list("total time of the project's functions:", inclusiveOwn),
  ].join('\n\n');
}

if (require.main === module) {
  const [file, top, from, to] = process.argv.slice(2);
  if (!file) {
    console.error('usage: cpu-profile-summary.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(top ?? 25), Number(from ?? 0), Number(to ?? Infinity)));
}
