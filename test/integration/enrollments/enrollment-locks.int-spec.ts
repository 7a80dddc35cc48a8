import { randomUUID } from 'node:crypto';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository } from '../../../src/domain/enrollments/enrollment-ledger.repository';
import { INDIVIDUAL_LOCKS_PER_BENEFIT } from '../../../src/infrastructure/database/repositories/enrollment-locks';
import { UnitOfWork } from '../../../src/infrastructure/database/unit-of-work';
import { describeWithPostgres } from '../../setup/test-env';
import { startTestService, TestService } from '../../utils/test-app';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The ledger's locks on real PostgreSQL: a request naming many individuals of one benefit must
 * not take a lock per individual (the lock table is shared and bounded), and must still hold off
 * every change of those individuals while it runs.
 */
describeWithPostgres('enrollment ledger locks', () => {
  let service: TestService;
  let uow: UnitOfWork;
  let ledgers: EnrollmentLedgerRepository;

  beforeAll(async () => {
    service = await startTestService();
    uow = service.app.get(UnitOfWork);
    ledgers = service.app.get(ENROLLMENT_LEDGER_REPOSITORY);
  });
  afterAll(() => service?.close());

  const benefit = () => ({ id: randomUUID(), connectionId: randomUUID(), entityId: randomUUID() });
  const people = (n: number) => Array.from({ length: n }, () => randomUUID());
  const heldLocks = async (): Promise<Record<string, number>> => {
    const rows: { mode: string; n: number }[] = await uow.manager.query(
      `SELECT mode, count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() GROUP BY mode`,
    );
    return Object.fromEntries(rows.map((r) => [r.mode, r.n]));
  };

  it('locks a benefit named with more individuals than the bound as a whole: one lock, exclusive', async () => {
    const held = await uow.transaction(async () => {
      await ledgers.lockForRequests([{ benefit: benefit(), individualIds: people(INDIVIDUAL_LOCKS_PER_BENEFIT * 5) }]);
      return heldLocks();
    });
    expect(held).toEqual({ ExclusiveLock: 1 });
  });

  it('locks a few individuals one by one, under their benefit held shared', async () => {
    const held = await uow.transaction(async () => {
      await ledgers.lockForRequests([{ benefit: benefit(), individualIds: people(20) }]);
      return heldLocks();
    });
    expect(held).toEqual({ ShareLock: 1, ExclusiveLock: 20 });
  });

  it('a change of one individual waits for a change of the whole benefit to commit', async () => {
    const b = benefit();
    const many = people(INDIVIDUAL_LOCKS_PER_BENEFIT + 1);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let bigLocked = false;
    const big = uow.transaction(async () => {
      await ledgers.lockForRequests([{ benefit: b, individualIds: many }]);
      bigLocked = true;
      await released;
    });
    for (let waited = 0; !bigLocked && waited < 5_000; waited += 10) await sleep(10);
    expect(bigLocked).toBe(true);

    let smallLocked = false;
    const small = uow.transaction(async () => {
      await ledgers.lockForRequests([{ benefit: b, individualIds: [many[0]] }]);
      smallLocked = true;
    });
    await sleep(300);
    expect(smallLocked).toBe(false);
    release();
    await Promise.all([big, small]);
    expect(smallLocked).toBe(true);
  });
});
