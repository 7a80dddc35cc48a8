/**
 * Benchmark: what a client-credentials check costs, by what the caller sent (issue 38, finding 4).
 *
 *   npx ts-node --transpile-only bench/client-secret-timing.ts [--rounds=60] [--attack-seconds=8]
 *
 * The service runs in a child process (bench/service-child.ts) on a fresh database with one
 * application (BENCH_APPLICATION). `GET /webhooks/event-types` needs nothing but the
 * application's credentials, so its answer time is the check's.
 * 1. Answer times, one request at a time, the kinds interleaved round by round so the machine's
 *    noise falls on all alike: a known client_id with a wrong secret, an unknown UUID, a client_id
 *    that is not a UUID, and the right secret. Limits raised out of the way
 *    (CLIENT_SECRET_MAX_FAILURES=1000). Medians, and each as a ratio of the known id's: an equal
 *    cost reads ~1.0 for the unknown ones.
 * 2. The right secret's answer time while 8 connections send wrong secrets for the same client_id
 *    as fast as they are answered, with the default limits: median and p95, and how many wrong
 *    secrets were hashed (answered 401) vs refused (429).
 * Figures, not assertions; printed only.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { runBenchmark, withBenchDatabase } from './bench-database';
import { argValue, BENCH_APPLICATION } from './bench-service';
import { startServiceChild } from './service-child';

const arg = (name: string, fallback: number) => Number(argValue(name) ?? fallback);
const ROUNDS = arg('rounds', 60);
const ATTACK_SECONDS = arg('attack-seconds', 8);

const basicOf = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const ms = (value: number) => `${value.toFixed(1)} ms`;

async function timed(url: string, authorization: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/webhooks/event-types`, { headers: { authorization } });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

async function withService<T>(env: Record<string, string>, work: (url: string) => Promise<T>): Promise<T> {
  return withBenchDatabase('secret_timing', async (dataSource) => {
    const service = await startServiceChild({
      name: 'secret-timing',
      databaseUrl: (dataSource.options as { url: string }).url,
      env: {
        DATABASE_POOL_SIZE: '5',
        OPS_USERNAME: 'ops',
        OPS_PASSWORD: 'ops-password-for-the-bench',
        LOG_LEVEL: 'warn',
        APP_CLIENT_ID: BENCH_APPLICATION.clientId,
        APP_CLIENT_SECRET: BENCH_APPLICATION.clientSecret,
        ...env,
      },
    });
    try {
      return await work(service.url);
    } finally {
      await service.stop();
    }
  });
}

async function answerTimes(url: string): Promise<void> {
  const kinds: Record<string, () => string> = {
    'known client_id, wrong secret': () => basicOf(BENCH_APPLICATION.clientId, 'wrong-secret-of-the-bench'),
    'unknown UUID': () => basicOf(randomUUID(), 'wrong-secret-of-the-bench'),
    'not a UUID': () => basicOf('not-a-uuid-at-all', 'wrong-secret-of-the-bench'),
    'known client_id, right secret': () => basicOf(BENCH_APPLICATION.clientId, BENCH_APPLICATION.clientSecret),
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
  // Warm-up: connections, the first statements, the decoy hash.
  for (const make of Object.values(kinds)) for (let i = 0; i < 3; i++) await timed(url, make());
  for (let round = 0; round < ROUNDS; round++) {
    for (const [kind, make] of Object.entries(kinds)) {
      const { status, ms: took } = await timed(url, make());
      if (status !== (kind.endsWith('right secret') ? 200 : 401)) throw new Error(`${kind}: answered ${status}`);
      times[kind].push(took);
    }
  }
  const known = quantile(times['known client_id, wrong secret'], 0.5);
  console.log(`\n1. Answer times, ${ROUNDS} of each, one at a time (limits raised)`);
  console.log(`   ${'what was sent'.padEnd(32)} ${'median'.padStart(10)} ${'p90'.padStart(10)}  ratio to known id`);
  for (const [kind, values] of Object.entries(times)) {
    const median = quantile(values, 0.5);
    console.log(`   ${kind.padEnd(32)} ${ms(median).padStart(10)} ${ms(quantile(values, 0.9)).padStart(10)}  ${(median / known).toFixed(2)}`);
  }
}

async function underAttack(url: string): Promise<void> {
  const right = basicOf(BENCH_APPLICATION.clientId, BENCH_APPLICATION.clientSecret);
  const wrong = basicOf(BENCH_APPLICATION.clientId, 'wrong-secret-of-the-bench');
  // The application has called before (as a live one has).
  if ((await timed(url, right)).status !== 200) throw new Error('the right secret was refused');
  const counts = { hashed: 0, refused: 0 };
  let attacking = true;
  const attacker = async () => {
    while (attacking) {
      const { status } = await timed(url, wrong);
      if (status === 401) counts.hashed++;
      else if (status === 429) counts.refused++;
    }
  };
  const attackers = Array.from({ length: 8 }, attacker);
  const legitimate: number[] = [];
  const until = performance.now() + ATTACK_SECONDS * 1000;
  while (performance.now() < until) {
    const { status, ms: took } = await timed(url, right);
    if (status !== 200) throw new Error(`the right secret was answered ${status} under attack`);
    legitimate.push(took);
    await new Promise((done) => setTimeout(done, 25));
  }
  attacking = false;
  await Promise.all(attackers);
  console.log(`\n2. The right secret while 8 connections send wrong ones for its client_id (${ATTACK_SECONDS} s, default limits)`);
  console.log(`   right secret: ${legitimate.length} calls, median ${ms(quantile(legitimate, 0.5))}, p95 ${ms(quantile(legitimate, 0.95))}`);
  console.log(`   wrong secrets: ${counts.hashed} hashed and refused with 401, ${counts.refused} refused with 429 unhashed`);
}

runBenchmark(async () => {
  await withService({ CLIENT_SECRET_MAX_FAILURES: '1000' }, answerTimes);
  await withService({}, underAttack);
});
