/**
 * What the service allocated, from the profiles BENCH_HEAP_SAMPLES=<dir> made it write
 * (heap-sampling.js): each profile's bytes, then, over the busiest profiles (at least half the
 * largest: a benchmark's rounds) or those named, the bytes by function, and by the nearest
 * function of this project on the stack (`dist/` or `src/`), which says what of the service's own
 * code made them, the libraries it called included.
 *
 *   npx ts-node --transpile-only bench/heap-samples.ts <dir> [--profiles=3,7] [--events=N] [--top=25]
 *
 * --events=N: the events the chosen profiles span, for the bytes per event.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { argValue } from './bench-service';
import { isOwnCode } from './cpu-profile-summary';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

interface HeapProfile {
  name: string;
  head: SamplingNode;
}

function frameName({ functionName, url, lineNumber }: SamplingNode['callFrame']): string {
  const file = url.split('/').pop() ?? '';
  return `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`;
}

function totalOf(node: SamplingNode): number {
  return node.children.reduce((sum, child) => sum + totalOf(child), node.selfSize);
}

/** Bytes by function, and by the nearest function of this project above each allocation. */
export function allocationsBy(profiles: readonly HeapProfile[]): { total: number; byFunction: Map<string, number>; byOwnFunction: Map<string, number> } {
  const byFunction = new Map<string, number>();
  const byOwnFunction = new Map<string, number>();
  let total = 0;
  const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node: SamplingNode, nearestOwn: string | undefined) => {
    const name = frameName(node.callFrame);
    const own = isOwnCode(node.callFrame.url) ? name : nearestOwn;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(byFunction, name, node.selfSize);
      add(byOwnFunction, own ?? `(none of the project's) ${name}`, node.selfSize);
    }
    for (const child of node.children) walk(child, own);
  };
  for (const profile of profiles) walk(profile.head, undefined);
  return { total, byFunction, byOwnFunction };
}

function main(): void {
  const [dir] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!dir) throw new Error('usage: heap-samples.ts <dir> [--profiles=3,7] [--events=N] [--top=25]');
  const top = Number(argValue('top') ?? 25);
  const events = argValue('events') === undefined ? undefined : Number(argValue('events'));
  const profiles: HeapProfile[] = readdirSync(dir)
    .filter((f) => f.endsWith('.heapprofile'))
    .sort()
    .map((f) => ({ name: f, head: (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { head: SamplingNode }).head }));
  const totals = profiles.map((p) => totalOf(p.head));
  const largest = Math.max(0, ...totals);
  const named = argValue('profiles')?.split(',').map(Number);
  const chosen = profiles.filter((_, i) => (named ? named.includes(i) : totals[i] >= largest / 2));
  console.log('profile  MB allocated');
  profiles.forEach((p, i) => console.log(`${String(i).padStart(7)}  ${(totals[i] / 1e6).toFixed(1).padStart(12)}  ${p.name}${chosen.includes(p) ? '  *' : ''}`));
  const { total, byFunction, byOwnFunction } = allocationsBy(chosen);
  console.log(`\nthe ${chosen.length} profiles marked *: ${(total / 1e6).toFixed(1)} MB${events ? `, ${(total / events / 1e3).toFixed(1)} KB per event` : ''}`);
  const print = (title: string, map: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [key, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((bytes / total) * 100).toFixed(1).padStart(6)} %  ${key}`);
  };
  print('by the function that allocated', byFunction);
  print("by the nearest function of the project's own code above it", byOwnFunction);
}

if (require.main === module) main();
