import { describeWithPostgres } from '../setup/test-env';
import { FuzzContext } from './fuzz-context';
import { FailureLog, fuzzRoute, fuzzSettings, readiness, ServerErrorLog } from './fuzz-harness';
import { registeredRoutes, routeName, ROUTES } from './route-catalogue';

const SPEC = 'test/fuzz/routes.fuzz-spec.ts';
const settings = fuzzSettings(ROUTES.length);
const selected = ROUTES.filter((route) => settings.route === undefined || routeName(route).includes(settings.route));

/**
 * Property-based fuzzing of every route over real HTTP, on real PostgreSQL: generated bodies,
 * query strings, path ids, methods and headers, with and without the right credentials. Each
 * answer must be below 500 and, from 400 on, the spec's error object; the service must stay
 * ready. Budget and replay: FUZZ_RUNS, FUZZ_SEED, FUZZ_PATH, FUZZ_ROUTE (test/fuzz/README.md).
 */
describeWithPostgres('fuzz: every route', () => {
  let context: FuzzContext;
  const serverErrors = new ServerErrorLog();
  const failures = new FailureLog();
  const answered: string[] = [];

  beforeAll(async () => {
    console.log(
      `[fuzz] seed ${settings.seed}: ${settings.runs} cases on each of ${selected.length} routes` +
        `${settings.path === undefined ? '' : `, replaying path ${settings.path}`}. Reproduce with FUZZ_SEED=${settings.seed}`,
    );
    serverErrors.start();
    context = await FuzzContext.start();
  }, 180_000);

  afterAll(async () => {
    serverErrors.stop();
    await context?.close();
    if (settings.report) failures.write(settings.report);
    if (settings.stats) console.log(`[fuzz] statuses by route:\n${answered.join('\n')}`);
    if (failures.all.length > 0) console.log(`[fuzz] seed ${settings.seed}: ${failures.all.length} failing case(s)\n\n${FailureLog.report(failures.all, SPEC)}`);
  });

  it('has an entry for every route the service registers, and none for a route it does not', () => {
    const registered = registeredRoutes(context.service.app.getHttpAdapter().getInstance());
    expect(registered.length).toBeGreaterThan(50);
    const catalogued = new Set(ROUTES.map(routeName));
    const served = new Set(registered.map(routeName));
    expect({ withoutEntry: [...served].filter((r) => !catalogued.has(r)), withoutRoute: [...catalogued].filter((r) => !served.has(r)) }).toEqual({
      withoutEntry: [],
      withoutRoute: [],
    });
  });

  it.each(selected.map((route) => [routeName(route), route] as const))(
    '%s',
    async (name, route) => {
      const statuses = await fuzzRoute(context, route, settings, failures, serverErrors);
      answered.push(`${name}: ${[...statuses].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}×${n}`).join(' ')}`);
      const notReady = await readiness(context);
      if (notReady) failures.record({ ...notReady, route: name, seed: settings.seed });
      for (const [kind, employer] of [['Automated', context.automated], ['Assisted', context.assisted]] as const) {
        // The shared employers must stay connected, or later routes would only see 401s.
        if (!(await context.usable(employer))) throw new Error(`the ${kind} employer's connection is no longer usable after ${name}: mark the route disposable`);
      }
      const found = failures.of(name);
      if (found.length > 0) throw new Error(`${found.length} of ${settings.runs} cases broke the property (seed ${settings.seed}):\n\n${FailureLog.report(found, SPEC)}`);
    },
    30 * 60_000,
  );
});
