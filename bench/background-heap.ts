/**
 * Benchmark: the service's heap while work it accepted runs in the background. Enrollment
 * requests are answered once their groups are queued; the groups are worked later by the job
 * worker, so a burst of large requests leaves that much work behind the answers. Measured with
 * the heap `npm start` gives the service (START_NODE_ARGS), on a sandbox employer of 10,000:
 *
 * - baseline: one request enrolling all 10,000, alone; the peak heap until its job completes;
 * - burst: BURST requests of 10,000 each (each in a benefit of its own, so none waits for
 *   another), sent at once; the peak heap until every job completes.
 *
 * Heap used is sampled from the service's /metrics every 50 ms. The figures that matter are
 * ratios: the burst's peak over the baseline's, and over the heap limit. Heap used counts
 * garbage not yet collected (V8 collects later the more room it has), so the margin is also
 * measured directly: the same burst on a service given three quarters of the heap. Writes
 * bench/results/background-heap.json.
 *
 *   npx ts-node --transpile-only bench/background-heap.ts [--quick]
 *
 * Targets (issue 38): the burst completes, the instance stays up, and its peak heap stays under
 * three quarters of the limit; the burst also completes with three quarters of the heap.
 */
import { DataSource } from 'typeorm';
import { runBenchmark, withBenchDatabase } from './bench-database';
import {
  BenchOptions,
  benchOptions,
  BenchService,
  bearerAuth,
  describeMachine,
  machineInfo,
  printTable,
  printTargets,
  round,
  sleep,
  startBenchService,
  START_NODE_ARGS,
  TargetCheck,
  urlOf,
  writeResult,
} from './bench-service';
import { createBenefit, Employer, prepareEmployer } from './enrollment';
import { heapOf } from './memory';

/**
 * Polls the service's heap used (MB) until stopped; the peak is what a burst costs, split at
 * `mark()`: while requests are being answered, and after (the background work alone).
 */
class HeapSampler {
  private readonly peaks = { answering: 0, background: 0 };
  private phase: keyof HeapSampler['peaks'] = 'answering';
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly baseUrl: string) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const figures = await heapOf(this.baseUrl).catch(() => undefined);
      if (figures && Number.isFinite(figures.heap_used)) this.peaks[this.phase] = Math.max(this.peaks[this.phase], figures.heap_used);
      await sleep(50);
    }
  }

  /** Every request answered: what follows is background work. */
  mark(): void {
    this.phase = 'background';
  }

  async stop(): Promise<{ answering: number; background: number }> {
    this.running = false;
    await this.done;
    return this.peaks;
  }
}

export interface BackgroundRun {
  requests: number;
  individuals_per_request: number;
  /** Until every request was answered (429s retried after their Retry-After). */
  accepted_seconds: number;
  /** Until every job completed. */
  complete_seconds: number;
  answers_429: number;
  peak_heap_mb: number;
  /** Until every request was answered (with their groups' work already running). */
  peak_heap_answering_mb: number;
  /** After: the background work alone. */
  peak_heap_background_mb: number;
}

export interface BackgroundHeapResult {
  machine: Awaited<ReturnType<typeof machineInfo>>;
  node_args: readonly string[];
  heap_limit_mb: number;
  idle_heap_mb: number;
  baseline: BackgroundRun;
  burst: BackgroundRun;
  /** The burst's peak heap over the baseline's. */
  burst_over_baseline: number;
  /** The burst's peak heap over the heap limit. */
  burst_over_limit: number;
  survived: boolean;
  /** The burst on a service with less heap (REDUCED_HEAP): the margin. */
  reduced_heap: { heap_limit_mb: number; completed: boolean; run?: BackgroundRun; failure?: string };
  targets: TargetCheck[];
  quick: boolean;
}

const seconds = (since: number) => (Date.now() - since) / 1000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** POSTs one enrollment of everyone, retrying a 429 (the body budget full) after its Retry-After. */
async function enrollEveryone(service: BenchService, employer: Employer, benefitId: string): Promise<{ jobId: string; answers429: number }> {
  const body = JSON.stringify(
    employer.individualIds.map((id) => ({ individual_id: id, configuration: { employee_deduction: { type: 'percent', amount: 500 } } })),
  );
  for (let answers429 = 0; ; answers429++) {
    const res = await fetch(`${service.url}/employer/benefits/${benefitId}/individuals`, {
      method: 'POST',
      headers: { ...bearerAuth(employer.token), 'content-type': 'application/json' },
      body,
    });
    if (res.status === 200) return { jobId: ((await res.json()) as { job_id: string }).job_id, answers429 };
    if (res.status !== 429) throw new Error(`enrollment answered ${res.status}: ${await res.text()}`);
    await sleep(Number(res.headers.get('retry-after') ?? '1') * 1000);
  }
}

async function run(service: BenchService, dataSource: DataSource, employer: Employer, benefitIds: string[]): Promise<BackgroundRun> {
  const sampler = new HeapSampler(service.url);
  const started = Date.now();
  const accepted = await Promise.all(benefitIds.map((benefitId) => enrollEveryone(service, employer, benefitId)));
  const acceptedSeconds = seconds(started);
  sampler.mark();
  const jobIds = accepted.map((a) => a.jobId);
  for (;;) {
    if (seconds(started) > 900) throw new Error(`enrollment jobs not done after 900 s`);
    if (!alive(service.pid)) throw new Error(`the service exited with enrollment jobs open:\n${service.output().slice(-2_000)}`);
    // From the rows: polling the API for jobs of 10,000 results would load the service measured.
    const [{ open }] = await dataSource.query(`SELECT count(*)::int AS open FROM jobs WHERE id = ANY($1::uuid[]) AND status IN ('pending', 'in_progress')`, [jobIds]);
    if (open === 0) break;
    await sleep(100);
  }
  const completeSeconds = seconds(started);
  const peaks = await sampler.stop();
  const [{ failed }] = await dataSource.query(`SELECT count(*)::int AS failed FROM jobs WHERE id = ANY($1::uuid[]) AND status <> 'complete'`, [jobIds]);
  if (failed > 0) throw new Error(`${failed} of ${jobIds.length} enrollment jobs did not complete`);
  return {
    requests: benefitIds.length,
    individuals_per_request: employer.individualIds.length,
    accepted_seconds: round(acceptedSeconds, 2),
    complete_seconds: round(completeSeconds, 2),
    answers_429: accepted.reduce((sum, a) => sum + a.answers429, 0),
    peak_heap_mb: Math.max(peaks.answering, peaks.background),
    peak_heap_answering_mb: peaks.answering,
    peak_heap_background_mb: peaks.background,
  };
}

/** The heap, as a share of npm start's, the burst must also complete in: the margin. */
const REDUCED_HEAP = 0.75;

/** The burst again on a service given less heap: whether it completes is the margin the full heap has. */
async function burstAtReducedHeap(
  dataSource: DataSource,
  employer: Employer,
  burst: number,
  heapLimitMb: number,
): Promise<{ heap_limit_mb: number; completed: boolean; run?: BackgroundRun; failure?: string }> {
  const reduced = Math.floor(heapLimitMb * REDUCED_HEAP);
  const nodeArgs = START_NODE_ARGS.map((arg) => (arg.startsWith('--max-old-space-size=') ? `--max-old-space-size=${reduced}` : arg));
  const service = await startBenchService(urlOf(dataSource), { nodeArgs });
  try {
    const benefitIds: string[] = [];
    for (let i = 0; i < burst; i++) benefitIds.push(await createBenefit(service, employer, `Background heap, three-quarter heap ${i}`));
    const burstRun = await run(service, dataSource, employer, benefitIds);
    return { heap_limit_mb: reduced, completed: true, run: burstRun };
  } catch (error) {
    return { heap_limit_mb: reduced, completed: false, failure: (error as Error).message.slice(0, 2_000) };
  } finally {
    await service.stop();
  }
}

export async function measureBackgroundHeap(options: BenchOptions = benchOptions()): Promise<TargetCheck[]> {
  const employeeSize = options.quick ? 2_000 : 10_000;
  const burst = options.quick ? 8 : 20;
  const heapLimitMb = Number(/--max-old-space-size=(\d+)/.exec(START_NODE_ARGS.join(' '))?.[1]);
  if (!heapLimitMb) throw new Error(`npm start sets no --max-old-space-size: ${START_NODE_ARGS.join(' ')}`);
  return withBenchDatabase('bench_background_heap', async (dataSource) => {
    const machine = await machineInfo(dataSource);
    console.log(`background-heap: ${describeMachine(machine)}`);
    const service = await startBenchService(urlOf(dataSource));
    let survived = false;
    let employer: Employer & { generationSeconds: number };
    let idle: number;
    let baseline: BackgroundRun;
    let bursted: BackgroundRun;
    try {
      employer = await prepareEmployer(service, dataSource, employeeSize);
      console.log(`  sandbox employer of ${employer.individualIds.length} generated in ${employer.generationSeconds} s (not measured)`);
      const benefitIds: string[] = [];
      for (let i = 0; i <= burst; i++) benefitIds.push(await createBenefit(service, employer, `Background heap ${i}`));
      await sleep(1_000);
      idle = (await heapOf(service.url)).heap_used;

      baseline = await run(service, dataSource, employer, benefitIds.slice(0, 1));
      console.log(`  baseline: 1 × ${employeeSize} complete in ${baseline.complete_seconds} s, peak heap ${baseline.peak_heap_mb} MB`);
      bursted = await run(service, dataSource, employer, benefitIds.slice(1));
      console.log(`  burst: ${burst} × ${employeeSize} complete in ${bursted.complete_seconds} s, peak heap ${bursted.peak_heap_mb} MB`);
      survived = (await fetch(`${service.url}/health/ready`)).status === 200;
    } catch (error) {
      if (!survived) console.error(`service output (tail):\n${service.output().slice(-4_000)}`);
      throw error;
    } finally {
      await service.stop();
    }
    const reducedHeap = await burstAtReducedHeap(dataSource, employer, burst, heapLimitMb);
    console.log(`  burst at ${reducedHeap.heap_limit_mb} MB of heap: ${reducedHeap.completed ? `complete in ${reducedHeap.run!.complete_seconds} s` : `did not complete: ${reducedHeap.failure}`}`);

    const burstOverLimit = round(bursted.peak_heap_mb / heapLimitMb, 2);
    const targets: TargetCheck[] = [
      {
        target: `${burst} requests of ${employeeSize} at once complete, the instance up, peak heap < 0.75 of the ${heapLimitMb} MB limit`,
        measured: `${bursted.peak_heap_mb} MB (${burstOverLimit} of the limit; one request alone ${baseline.peak_heap_mb} MB), ${survived ? 'up' : 'not ready'}`,
        met: survived && burstOverLimit < 0.75,
      },
      {
        target: `the same burst completes with ${REDUCED_HEAP} of the heap (${reducedHeap.heap_limit_mb} MB): the full heap has room to spare`,
        measured: reducedHeap.completed ? `complete in ${reducedHeap.run!.complete_seconds} s, peak heap ${reducedHeap.run!.peak_heap_mb} MB` : 'did not complete',
        met: reducedHeap.completed,
      },
    ];
    const result: BackgroundHeapResult = {
      machine,
      node_args: START_NODE_ARGS,
      heap_limit_mb: heapLimitMb,
      idle_heap_mb: idle,
      baseline,
      burst: bursted,
      burst_over_baseline: round(bursted.peak_heap_mb / baseline.peak_heap_mb, 2),
      burst_over_limit: burstOverLimit,
      survived,
      reduced_heap: reducedHeap,
      targets,
      quick: options.quick,
    };
    console.log('');
    const runs: [string, BackgroundRun, number][] = [
      ['baseline', baseline, heapLimitMb],
      ['burst', bursted, heapLimitMb],
      ...(reducedHeap.run ? [['burst, three-quarter heap', reducedHeap.run, reducedHeap.heap_limit_mb] as [string, BackgroundRun, number]] : []),
    ];
    printTable(
      ['run', 'heap limit MB', 'requests', 'accepted s', 'complete s', '429s', 'peak heap MB', 'answering', 'background', 'of limit'],
      runs.map(([name, r, limit]) => [
        name,
        limit,
        r.requests,
        r.accepted_seconds,
        r.complete_seconds,
        r.answers_429,
        r.peak_heap_mb,
        r.peak_heap_answering_mb,
        r.peak_heap_background_mb,
        round(r.peak_heap_mb / limit, 2),
      ]),
    );
    console.log(`idle heap ${idle} MB; burst peak ÷ baseline peak ${result.burst_over_baseline}`);
    printTargets(targets);
    console.log(`written to ${writeResult('background-heap', options, result)}`);
    return targets;
  });
}

if (require.main === module) runBenchmark(async () => void (await measureBackgroundHeap()));
