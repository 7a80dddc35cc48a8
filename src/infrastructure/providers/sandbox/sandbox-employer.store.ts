import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import {
  CompanyRecord,
  DirectoryEntry,
  directoryEntryOf,
  EmploymentRecord,
  IndividualRecord,
  PayGroupRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../../../domain/employer/unified-records';
import { computePayStatement, yearToDateAfterWritten } from '../../../domain/payroll/pay-statement-calculator';
import { EarningLine, StatementKind, YearToDate } from '../../../domain/payroll/payroll.types';
import { ProviderCatalogue } from '../../../domain/providers/provider-catalogue';
import { EmployerRef, Page, Paged } from '../../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { invalidRequest } from '../../../domain/shared/domain-error';
import { returnedRows } from '../../database/query-result';
import { generateSandboxEmployer, runsPayroll } from './sandbox-employer-generator';
import { addDays, daysBetween, debitDateOf, isIsoDate, payFrequencyOfPeriod, payPeriodOf, SandboxPayFrequency, toIsoDate } from './sandbox-pay-calendar';
import { ColumnSet } from '../../database/column-set';
import {
  enrollmentInForceOf,
  enrollmentsInForceOn,
  isPaidInPeriod,
  PaymentTotals,
  PayRun,
  payStatementInputOf,
  toPayStatementRecord,
  writtenStatementOf,
} from './sandbox-pay-run';
import { PayRunAdjustments, SandboxPayAdjustment } from './sandbox-pay-adjustments';
import { clearPayAdjustments, pairsEverEnrolled, readPayAdjustments, readPayRunAdjustments, writePayAdjustments } from './sandbox-pay-adjustment-rows';
import {
  NewSandboxPerson,
  PaymentMethod,
  PayRunOptions,
  SandboxBenefit,
  SandboxEnrollment,
  SandboxEnrollmentConfiguration,
  SandboxPerson,
} from './sandbox-payroll.types';

/** Rows per bulk statement: big enough to be fast, small enough to keep memory flat. */
const CHUNK_SIZE = 500;
/** Enrollments written per statement: small columns (column-set.ts), so a large request takes few statements. */
const ENROLL_CHUNK_SIZE = 5_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATEMENT_KINDS: readonly StatementKind[] = ['regular_payroll', 'off_cycle_payroll', 'one_time_payment'];

/** Only well-formed UUIDs reach a `uuid` column: anything else is simply unknown. */
const uuidsOf = (ids: string[]) => [...new Set(ids.filter((id) => typeof id === 'string' && UUID.test(id)).map((id) => id.toLowerCase()))];

interface PersonRow {
  id: string;
  position: number;
  individual: IndividualRecord;
  employment: EmploymentRecord;
  payment_method: PaymentMethod;
}

interface RunRequest {
  paymentId: string;
  payDate?: string;
  kind: StatementKind;
  individualIds?: string[];
  earnings?: EarningLine[];
  /**
   * A given pay period and its frequency; default: the calendar's two weeks before the pay date.
   * A period of no frequency's shape has its days instead, and the pay schedule's frequency.
   */
  period?: { start_date: string; end_date: string; frequency: SandboxPayFrequency | undefined; days?: number };
  /** Statements given as written, by individual id (lower case). */
  statements?: Map<string, PayStatementRecord>;
  /** The pending adjustments a regular run applies to its computed statements (sandbox-pay-adjustments.ts). */
  adjustments?: PayRunAdjustments;
}

/**
 * The sandbox payroll system's storage: one simulated employer per connection entity, in
 * PostgreSQL. Every method takes the EmployerRef and first makes sure the employer exists
 * (generated on first reach, exactly once); records come back in the Unified API's wire shape.
 * Unknown ids are left out of batch answers; a lookup of one unknown id returns undefined.
 */
@Injectable()
export class SandboxEmployerStore {
  /** Entities known to be generated. A cache only: a miss costs one primary-key lookup. */
  private readonly generated = new Set<string>();
  private readonly generating = new Map<string, Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly catalogue: ProviderCatalogue,
  ) {}

  /**
   * Generates the employer of `ref` (company, people, benefits, six months of pay history) the
   * first time it is reached, in one transaction. Concurrent callers wait for the one that
   * generates; none generates twice.
   */
  async ensureEmployer(ref: EmployerRef): Promise<void> {
    if (this.generated.has(ref.entityId)) return;
    // Callers in this process share one attempt; other processes wait on the database lock.
    let attempt = this.generating.get(ref.entityId);
    if (!attempt) {
      attempt = this.generateUnlessStored(ref).finally(() => this.generating.delete(ref.entityId));
      this.generating.set(ref.entityId, attempt);
    }
    await attempt;
    this.generated.add(ref.entityId);
  }

  async company(ref: EmployerRef): Promise<CompanyRecord> {
    await this.ensureEmployer(ref);
    const [row] = await this.dataSource.query(`SELECT company FROM sandbox_employers WHERE entity_id = $1`, [ref.entityId]);
    return row.company;
  }

  /** Shallow merge of top-level fields (a given array replaces the stored one); `id` is kept. */
  async updateCompany(ref: EmployerRef, patch: Partial<Omit<CompanyRecord, 'id'>>): Promise<CompanyRecord> {
    await this.ensureEmployer(ref);
    const { id: _ignored, ...changes } = patch as Partial<CompanyRecord>;
    const rows = returnedRows<{ company: CompanyRecord }>(
      await this.dataSource.query(
        `UPDATE sandbox_employers SET company = company || $2::jsonb, updated_at = $3 WHERE entity_id = $1 RETURNING company`,
        [ref.entityId, JSON.stringify(changes), this.clock.now()],
      ),
    );
    return rows[0].company;
  }

  /** Directory in stable order (generation order, then additions), with the total count. */
  async directory(ref: EmployerRef, page: Page): Promise<Paged<DirectoryEntry>> {
    await this.ensureEmployer(ref);
    const [{ count }] = await this.dataSource.query(`SELECT count(*)::int AS count FROM sandbox_individuals WHERE entity_id = $1`, [
      ref.entityId,
    ]);
    const rows: { employment: EmploymentRecord }[] = await this.dataSource.query(
      `SELECT employment FROM sandbox_individuals WHERE entity_id = $1 ORDER BY position LIMIT $2 OFFSET $3`,
      [ref.entityId, page.limit, page.offset],
    );
    return { count, offset: page.offset, items: rows.map(({ employment }) => directoryEntryOf(employment)) };
  }

  /** Individuals with `ssn` filled (the read layer blanks it unless asked for), in directory order. */
  async individuals(ref: EmployerRef, ids: string[]): Promise<IndividualRecord[]> {
    return (await this.people(ref, ids)).map((p) => p.individual);
  }

  async employments(ref: EmployerRef, ids: string[]): Promise<EmploymentRecord[]> {
    return (await this.people(ref, ids)).map((p) => p.employment);
  }

  /** Employees with both records and how they are paid, in directory order. */
  async people(ref: EmployerRef, ids: string[]): Promise<SandboxPerson[]> {
    await this.ensureEmployer(ref);
    const known = uuidsOf(ids);
    if (known.length === 0) return [];
    const rows: PersonRow[] = await this.dataSource.query(
      `SELECT id, position, individual, employment, payment_method FROM sandbox_individuals
       WHERE entity_id = $1 AND id = ANY($2::uuid[]) ORDER BY position`,
      [ref.entityId, known],
    );
    return rows.map(personOf);
  }

  /** Which of these ids are the employer's people (lower case): their ids alone, not their records. */
  async existingIds(ref: EmployerRef, ids: string[]): Promise<Set<string>> {
    await this.ensureEmployer(ref);
    const known = uuidsOf(ids);
    if (known.length === 0) return new Set();
    const rows: { id: string }[] = await this.dataSource.query(`SELECT id FROM sandbox_individuals WHERE entity_id = $1 AND id = ANY($2::uuid[])`, [
      ref.entityId,
      known,
    ]);
    return new Set(rows.map((r) => r.id));
  }

  /** Adds employees at the end of the directory; mints ids not given. One transaction. */
  async addIndividuals(ref: EmployerRef, people: NewSandboxPerson[]): Promise<SandboxPerson[]> {
    await this.ensureEmployer(ref);
    const added: SandboxPerson[] = people.map((person) => {
      const id = person.id ?? randomUUID();
      const { first_name, middle_name, last_name } = person.individual;
      return {
        individual: { ...person.individual, id },
        employment: { ...person.employment, id, first_name, middle_name, last_name },
        paymentMethod: person.paymentMethod ?? 'direct_deposit',
      };
    });
    const badIds = people.filter((p) => p.id !== undefined && !UUID.test(p.id)).map((p) => p.id);
    if (badIds.length > 0) throw invalidRequest(`Individual ids must be UUIDs: ${badIds.join(', ')}`);
    await this.dataSource.transaction(async (manager) => {
      // Serialises additions: positions stay unique and in order.
      await this.lockEmployer(manager, ref.entityId);
      const [{ next }] = await manager.query(
        `SELECT coalesce(max(position) + 1, 0)::int AS next FROM sandbox_individuals WHERE entity_id = $1`,
        [ref.entityId],
      );
      const taken: { id: string }[] = await manager.query(
        `SELECT id FROM sandbox_individuals WHERE entity_id = $1 AND id = ANY($2::uuid[])`,
        [ref.entityId, added.map((p) => p.individual.id)],
      );
      if (taken.length > 0) throw invalidRequest(`Individual ids already exist: ${taken.map((t) => t.id).join(', ')}`);
      await insertPeople(manager, ref.entityId, added, next);
    });
    return added;
  }

  /**
   * Shallow merge into the individual; name changes are copied to the employment record
   * (which repeats the names). Undefined for an unknown id.
   */
  async updateIndividual(
    ref: EmployerRef,
    id: string,
    patch: Partial<Omit<IndividualRecord, 'id'>>,
  ): Promise<IndividualRecord | undefined> {
    await this.ensureEmployer(ref);
    if (!UUID.test(id)) return undefined;
    const { id: _ignored, ...changes } = patch as Partial<IndividualRecord>;
    const names = Object.fromEntries(
      (['first_name', 'middle_name', 'last_name'] as const).filter((key) => key in changes).map((key) => [key, changes[key]]),
    );
    const rows = returnedRows<{ individual: IndividualRecord }>(
      await this.dataSource.query(
        `UPDATE sandbox_individuals SET individual = individual || $3::jsonb, employment = employment || $4::jsonb
         WHERE entity_id = $1 AND id = $2 RETURNING individual`,
        [ref.entityId, id, JSON.stringify(changes), JSON.stringify(names)],
      ),
    );
    return rows[0]?.individual;
  }

  /** Shallow merge into the employment (names come from the individual). Undefined for an unknown id. */
  async updateEmployment(
    ref: EmployerRef,
    id: string,
    patch: Partial<Omit<EmploymentRecord, 'id' | 'first_name' | 'middle_name' | 'last_name'>>,
  ): Promise<EmploymentRecord | undefined> {
    await this.ensureEmployer(ref);
    if (!UUID.test(id)) return undefined;
    const { id: _id, first_name: _first, middle_name: _middle, last_name: _last, ...changes } = patch as Partial<EmploymentRecord>;
    const rows = returnedRows<{ employment: EmploymentRecord }>(
      await this.dataSource.query(
        `UPDATE sandbox_individuals SET employment = employment || $3::jsonb WHERE entity_id = $1 AND id = $2 RETURNING employment`,
        [ref.entityId, id, JSON.stringify(changes)],
      ),
    );
    return rows[0]?.employment;
  }

  /** Payments whose pay date is within [startDate, endDate] (`YYYY-MM-DD`), oldest first. */
  async payments(ref: EmployerRef, startDate: string, endDate: string): Promise<PaymentRecord[]> {
    await this.ensureEmployer(ref);
    const rows: { body: PaymentRecord }[] = await this.dataSource.query(
      `SELECT body FROM sandbox_payments WHERE entity_id = $1 AND pay_date BETWEEN $2::date AND $3::date ORDER BY pay_date, created_at, id`,
      [ref.entityId, startDate, endDate],
    );
    return rows.map((r) => r.body);
  }

  async payment(ref: EmployerRef, id: string): Promise<PaymentRecord | undefined> {
    await this.ensureEmployer(ref);
    if (!UUID.test(id)) return undefined;
    const [row] = await this.dataSource.query(`SELECT body FROM sandbox_payments WHERE entity_id = $1 AND id = $2`, [ref.entityId, id]);
    return row?.body;
  }

  /** Statements of one payment ordered by individual id; undefined for an unknown payment. */
  async payStatements(ref: EmployerRef, paymentId: string, page: Page): Promise<Paged<PayStatementRecord> | undefined> {
    const payment = await this.payment(ref, paymentId);
    if (!payment) return undefined;
    const rows: { body: PayStatementRecord }[] = await this.dataSource.query(
      `SELECT body FROM sandbox_pay_statements WHERE entity_id = $1 AND payment_id = $2 ORDER BY individual_id LIMIT $3 OFFSET $4`,
      [ref.entityId, paymentId, page.limit, page.offset],
    );
    return { count: payment.individual_ids.length, offset: page.offset, items: rows.map((r) => r.body) };
  }

  async payGroups(ref: EmployerRef): Promise<PayGroupRecord[]> {
    return this.readPayGroups(ref);
  }

  async payGroup(ref: EmployerRef, id: string): Promise<PayGroupRecord | undefined> {
    if (!UUID.test(id)) {
      await this.ensureEmployer(ref);
      return undefined;
    }
    const [group] = await this.readPayGroups(ref, id);
    return group;
  }

  /** The deductions the provider runs for this employer, oldest first. */
  async benefits(ref: EmployerRef): Promise<SandboxBenefit[]> {
    await this.ensureEmployer(ref);
    return this.readBenefits(this.dataSource.manager, ref.entityId);
  }

  async benefit(ref: EmployerRef, id: string): Promise<SandboxBenefit | undefined> {
    await this.ensureEmployer(ref);
    if (!UUID.test(id)) return undefined;
    const [benefit] = await this.readBenefits(this.dataSource.manager, ref.entityId, id);
    return benefit;
  }

  /** Creates a deduction at the provider (no dedupe here: that is the service's rule). */
  async addBenefit(ref: EmployerRef, benefit: Omit<SandboxBenefit, 'benefit_id'> & { benefit_id?: string }): Promise<SandboxBenefit> {
    await this.ensureEmployer(ref);
    const created: SandboxBenefit = { ...benefit, benefit_id: benefit.benefit_id ?? randomUUID() };
    await insertBenefits(this.dataSource.manager, ref.entityId, [created], this.clock.now());
    return created;
  }

  /** Changes a deduction's description; undefined for an unknown id. */
  async updateBenefit(ref: EmployerRef, id: string, patch: { description: string }): Promise<SandboxBenefit | undefined> {
    await this.ensureEmployer(ref);
    if (!UUID.test(id)) return undefined;
    const rows = returnedRows<{ id: string }>(
      await this.dataSource.query(`UPDATE sandbox_benefits SET description = $3 WHERE entity_id = $1 AND id = $2 RETURNING id`, [
        ref.entityId,
        id,
        patch.description,
      ]),
    );
    return rows.length === 0 ? undefined : this.benefit(ref, id);
  }

  /**
   * Enrollments in force on `onDate` (`YYYY-MM-DD`): per (benefit, individual) the one with the
   * latest effective date on or before it, unless it ended on or before that date.
   */
  async enrollmentsInForce(
    ref: EmployerRef,
    onDate: string,
    filter: { benefitId?: string; individualIds?: string[] } = {},
  ): Promise<SandboxEnrollment[]> {
    await this.ensureEmployer(ref);
    if (filter.benefitId !== undefined && !UUID.test(filter.benefitId)) return [];
    return readEnrollmentsInForce(this.dataSource.manager, ref.entityId, onDate, {
      benefitId: filter.benefitId,
      individualIds: filter.individualIds && uuidsOf(filter.individualIds),
    });
  }

  /**
   * Enrolls (or re-enrolls: overwrite) individuals in a benefit from `effective_date` on. The same
   * (benefit, individual, effective date) replaces that row's configuration and clears its end;
   * a later effective date overrides the earlier row from then on. Unknown benefit or individual
   * ids throw an invalid_request DomainError and nothing is written.
   */
  async enroll(
    ref: EmployerRef,
    benefitId: string,
    enrollments: { individual_id: string; effective_date: string; configuration: SandboxEnrollmentConfiguration }[],
  ): Promise<void> {
    await this.ensureEmployer(ref);
    if (!UUID.test(benefitId) || !(await this.benefit(ref, benefitId))) throw invalidRequest(`Unknown benefit ${benefitId}`);
    const unique = uniqueEnrollments(enrollments);
    const known = await this.existingIds(ref, unique.map((e) => e.individual_id));
    const unknown = unique.filter((e) => !known.has(e.individual_id.toLowerCase())).map((e) => e.individual_id);
    if (unknown.length > 0) throw invalidRequest(`Unknown individual ids: ${[...new Set(unknown)].join(', ')}`);
    const now = this.clock.now();
    await this.dataSource.transaction(async (manager) => {
      for (let at = 0; at < unique.length; at += ENROLL_CHUNK_SIZE) {
        const chunk = unique.slice(at, at + ENROLL_CHUNK_SIZE).map((e) => ({
          benefit_id: benefitId,
          individual_id: e.individual_id.toLowerCase(),
          effective_date: e.effective_date,
          configuration: e.configuration,
          ended_on: null,
        }));
        await insertEnrollments(manager, ref.entityId, chunk, now);
      }
    });
  }

  /**
   * Enrolls those of these individuals who are the employer's people and leaves the others out,
   * as a provider's batch call does; answers the ids enrolled (lower case). One statement (a
   * transaction of one per ENROLL_CHUNK_SIZE for more): the people and the benefit are checked
   * where the rows are written, not read first. An unknown benefit writes nothing and throws,
   * unless none of the individuals is known either (then every one is simply not enrolled).
   */
  async enrollKnown(
    ref: EmployerRef,
    benefitId: string,
    enrollments: { individual_id: string; effective_date: string; configuration: SandboxEnrollmentConfiguration }[],
  ): Promise<Set<string>> {
    await this.ensureEmployer(ref);
    const rows = uniqueEnrollments(enrollments)
      .filter((e) => UUID.test(e.individual_id))
      .map((e) => ({ benefit_id: benefitId, individual_id: e.individual_id.toLowerCase(), effective_date: e.effective_date, configuration: e.configuration, ended_on: null }));
    if (rows.length === 0) return new Set();
    const unknownBenefit = async (): Promise<string[]> => {
      if ((await this.existingIds(ref, rows.map((r) => r.individual_id))).size > 0) throw invalidRequest(`Unknown benefit ${benefitId}`);
      return [];
    };
    if (!UUID.test(benefitId)) return new Set(await unknownBenefit());
    const now = this.clock.now();
    const write = async (manager: EntityManager, chunk: SandboxEnrollment[]): Promise<string[]> => {
      const [answer]: { benefit_known: boolean; enrolled: string[] }[] = await manager.query(...enrollKnownPeople(ref.entityId, benefitId, chunk, now));
      return answer.benefit_known ? answer.enrolled : unknownBenefit();
    };
    if (rows.length <= ENROLL_CHUNK_SIZE) return new Set(await write(this.dataSource.manager, rows));
    return this.dataSource.transaction(async (manager) => {
      const enrolled = new Set<string>();
      for (let at = 0; at < rows.length; at += ENROLL_CHUNK_SIZE) for (const id of await write(manager, rows.slice(at, at + ENROLL_CHUNK_SIZE))) enrolled.add(id);
      return enrolled;
    });
  }

  /**
   * Ends the individuals' enrollments in the benefit from `onDate` on (enrollments that would
   * only start later are dropped). Returns the ids that had one in force or scheduled.
   */
  async unenroll(ref: EmployerRef, benefitId: string, individualIds: string[], onDate: string): Promise<string[]> {
    await this.ensureEmployer(ref);
    const ids = uuidsOf(individualIds);
    if (!UUID.test(benefitId) || ids.length === 0) return [];
    if (!isIsoDate(onDate)) throw invalidRequest(`The unenrollment date must be YYYY-MM-DD, not ${onDate}`);
    return this.dataSource.transaction(async (manager) => {
      const inForce = await readEnrollmentsInForce(manager, ref.entityId, onDate, { benefitId, individualIds: ids });
      const scheduled = returnedRows<{ individual_id: string }>(
        await manager.query(
          `DELETE FROM sandbox_enrollments WHERE entity_id = $1 AND benefit_id = $2 AND individual_id = ANY($3::uuid[]) AND effective_date > $4::date
           RETURNING individual_id`,
          [ref.entityId, benefitId, ids, onDate],
        ),
      );
      await manager.query(
        `UPDATE sandbox_enrollments e SET ended_on = $5::date, updated_at = $6
         FROM unnest($3::uuid[], $4::date[]) AS k(individual_id, effective_date)
         WHERE e.entity_id = $1 AND e.benefit_id = $2 AND e.individual_id = k.individual_id AND e.effective_date = k.effective_date`,
        [ref.entityId, benefitId, inForce.map((e) => e.individual_id), inForce.map((e) => e.effective_date), onDate, this.clock.now()],
      );
      return [...new Set([...inForce.map((e) => e.individual_id), ...scheduled.map((r) => r.individual_id)])];
    });
  }

  /** Of the given individuals, those whose enrollment in the benefit ends exactly on `onDate`. */
  async enrollmentsEndedOn(ref: EmployerRef, benefitId: string, individualIds: string[], onDate: string): Promise<string[]> {
    const ids = uuidsOf(individualIds);
    if (!UUID.test(benefitId) || ids.length === 0 || !isIsoDate(onDate)) return [];
    const rows: { individual_id: string }[] = await this.dataSource.query(
      `SELECT DISTINCT individual_id FROM sandbox_enrollments
       WHERE entity_id = $1 AND benefit_id = $2 AND individual_id = ANY($3::uuid[]) AND ended_on = $4::date`,
      [ref.entityId, benefitId, ids, onDate],
    );
    return rows.map((r) => r.individual_id);
  }

  /** Pending adjustments of the next regular pay run (sandbox-pay-adjustments.ts), by individual then benefit. */
  async payAdjustments(ref: EmployerRef): Promise<SandboxPayAdjustment[]> {
    await this.ensureEmployer(ref);
    return readPayAdjustments(this.dataSource.manager, ref.entityId);
  }

  /**
   * Adds adjustments for the next regular pay run (ids of the employer's people and benefits,
   * checked by the caller; the foreign keys hold them to it), replacing pending ones of the same
   * (individual, benefit); answers every pending one. Serialised with pay runs by the employer lock.
   */
  async addPayAdjustments(ref: EmployerRef, adjustments: SandboxPayAdjustment[]): Promise<SandboxPayAdjustment[]> {
    await this.ensureEmployer(ref);
    const rows = adjustments.map((a) => ({ ...a, individual_id: a.individual_id.toLowerCase(), benefit_id: a.benefit_id.toLowerCase() }));
    return this.dataSource.transaction(async (manager) => {
      await this.lockEmployer(manager, ref.entityId);
      await writePayAdjustments(manager, ref.entityId, rows, this.clock.now());
      return readPayAdjustments(manager, ref.entityId);
    });
  }

  /** Drops the pending adjustments; answers how many there were. */
  async clearPayAdjustments(ref: EmployerRef): Promise<number> {
    await this.ensureEmployer(ref);
    return this.dataSource.transaction(async (manager) => {
      await this.lockEmployer(manager, ref.entityId);
      return clearPayAdjustments(manager, ref.entityId);
    });
  }

  /** Of these (benefit, individual) pairs, those with any enrollment row (in force, ended or scheduled), as `benefit|individual`. */
  async everEnrolled(ref: EmployerRef, pairs: { benefit_id: string; individual_id: string }[]): Promise<Set<string>> {
    await this.ensureEmployer(ref);
    const known = pairs.filter((p) => UUID.test(p.benefit_id) && UUID.test(p.individual_id));
    return pairsEverEnrolled(this.dataSource.manager, ref.entityId, known);
  }

  /**
   * Runs one pay period for every employee paid by payroll and employed in the period (or the
   * given ones), applying the enrollments in force on the pay date and each employee's
   * year-to-date totals, and stores the payment with its statements in ONE transaction: a
   * failure leaves no part of the run behind. Runs of one employer are serialised. Statements
   * given as written are stored as they are and counted in their employees' running totals;
   * everyone else paid in the period gets a computed one.
   */
  async runPayPeriod(ref: EmployerRef, options: PayRunOptions = {}): Promise<PaymentRecord> {
    await this.ensureEmployer(ref);
    const provider = this.catalogue.get(ref.providerId);
    if (!runsPayroll(provider)) throw invalidRequest(`${provider.display_name} runs no payroll: it has no payments or pay statements`);
    if (options.payDate !== undefined && !isIsoDate(options.payDate)) {
      throw invalidRequest(`pay_date must be a date as YYYY-MM-DD, not ${options.payDate}`);
    }
    const kind = options.kind ?? 'regular_payroll';
    if (!STATEMENT_KINDS.includes(kind)) throw invalidRequest(`The pay run type must be one of ${STATEMENT_KINDS.join(', ')}`);
    if (options.individualIds !== undefined && options.individualIds.length === 0) {
      throw invalidRequest('A pay run for chosen individuals needs at least one individual id');
    }
    const period = options.period && periodWithFrequency(options.period, options.payDate);
    const statements = options.statements && statementsById(options.statements, options.individualIds);
    const payment = await this.dataSource.transaction((manager) =>
      this.runInTransaction(manager, ref.entityId, {
        paymentId: randomUUID(),
        payDate: options.payDate,
        kind,
        individualIds: options.individualIds,
        earnings: options.earnings,
        period,
        statements,
      }),
    );
    if (!payment) throw invalidRequest(`Nobody is paid by payroll on ${options.payDate ?? 'the next pay date'}`);
    return payment;
  }

  /** The pay date a run without one gets: 14 days after the latest regular run, or today when that is earlier. */
  async nextPayDate(ref: EmployerRef): Promise<string> {
    await this.ensureEmployer(ref);
    return this.defaultPayDate(this.dataSource.manager, ref.entityId);
  }

  /** Employees in directory order, `size` at a time (keyset paging: memory stays bounded). */
  async *peopleInPages(ref: EmployerRef, size = CHUNK_SIZE): AsyncIterable<SandboxPerson[]> {
    await this.ensureEmployer(ref);
    for (let after = -1; ; ) {
      const rows = await readPeoplePage(this.dataSource.manager, ref.entityId, after, size);
      if (rows.length === 0) return;
      after = rows[rows.length - 1].position;
      yield rows.map(personOf);
    }
  }

  /**
   * Every statement of every payment (oldest payment first, then by individual id), in batches
   * of `size` filled across payments; each page is its own keyset query.
   */
  async *payStatementsInPages(
    ref: EmployerRef,
    size = CHUNK_SIZE,
  ): AsyncIterable<{ payment_id: string; pay_date: string; statement: PayStatementRecord }[]> {
    await this.ensureEmployer(ref);
    const payments: { id: string; pay_date: string }[] = await this.dataSource.query(
      `SELECT id, to_char(pay_date, 'YYYY-MM-DD') AS pay_date FROM sandbox_payments WHERE entity_id = $1 ORDER BY pay_date, created_at, id`,
      [ref.entityId],
    );
    let batch: { payment_id: string; pay_date: string; statement: PayStatementRecord }[] = [];
    for (const payment of payments) {
      for (let after = '00000000-0000-0000-0000-000000000000'; ; ) {
        const rows: { individual_id: string; body: PayStatementRecord }[] = await this.dataSource.query(
          `SELECT individual_id, body FROM sandbox_pay_statements
           WHERE entity_id = $1 AND payment_id = $2 AND individual_id > $3 ORDER BY individual_id LIMIT $4`,
          [ref.entityId, payment.id, after, size - batch.length],
        );
        if (rows.length === 0) break;
        after = rows[rows.length - 1].individual_id;
        for (const row of rows) batch.push({ payment_id: payment.id, pay_date: payment.pay_date, statement: row.body });
        if (batch.length >= size) {
          yield batch;
          batch = [];
        }
      }
    }
    if (batch.length > 0) yield batch;
  }

  // -------------------------------------------------------------------------------------------

  private async generateUnlessStored(ref: EmployerRef): Promise<void> {
    const stored = await this.dataSource.query(`SELECT 1 FROM sandbox_employers WHERE entity_id = $1`, [ref.entityId]);
    if (stored.length > 0) return;
    const provider = this.catalogue.get(ref.providerId);
    await this.dataSource.transaction(async (manager) => {
      // One generator per employer across processes: the others wait here, then find the row.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('sandbox_employer:' || $1, 0))`, [ref.entityId]);
      const generated = await manager.query(`SELECT 1 FROM sandbox_employers WHERE entity_id = $1`, [ref.entityId]);
      if (generated.length > 0) return;
      const now = this.clock.now();
      const employer = generateSandboxEmployer({
        seed: ref.entityId,
        companyId: ref.entityId,
        employeeSize: ref.employeeSize,
        legalName: ref.entityName,
        today: toIsoDate(now),
        provider,
        authenticationType: ref.authenticationType,
      });
      // The primary key stays the last word should the lock ever be bypassed.
      const claimed: unknown[] = await manager.query(
        `INSERT INTO sandbox_employers (entity_id, connection_id, provider_id, seed, employee_size, company, generated_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (entity_id) DO NOTHING RETURNING entity_id`,
        [ref.entityId, ref.connectionId, provider.id, ref.entityId, ref.employeeSize, JSON.stringify(employer.company), now],
      );
      if (claimed.length === 0) return;
      for (let at = 0; at < employer.people.length; at += CHUNK_SIZE) {
        await insertPeople(manager, ref.entityId, employer.people.slice(at, at + CHUNK_SIZE), at);
      }
      await manager.query(
        `INSERT INTO sandbox_pay_groups (entity_id, id, name, pay_frequencies)
         SELECT $1, g.id, g.name, ARRAY(SELECT jsonb_array_elements_text(g.pay_frequencies))
         FROM jsonb_to_recordset($2::jsonb) AS g(id uuid, name text, pay_frequencies jsonb)`,
        [ref.entityId, JSON.stringify(employer.payGroups)],
      );
      await insertBenefits(manager, ref.entityId, employer.benefits, now);
      for (let at = 0; at < employer.enrollments.length; at += CHUNK_SIZE) {
        await insertEnrollments(manager, ref.entityId, employer.enrollments.slice(at, at + CHUNK_SIZE), now);
      }
      // The history is computed from the generated data in memory (the same computation as
      // runPayPeriod, without reading back what was just written); only its results are written.
      const source = new GeneratedPayRunSource(employer.people, employer.enrollments);
      for (const run of employer.payRuns) {
        await this.payRun(manager, ref.entityId, { paymentId: run.paymentId, payDate: run.payDate, kind: run.kind }, source);
      }
      const totalsAfter = source.yearToDateRows();
      for (let at = 0; at < totalsAfter.length; at += CHUNK_SIZE) {
        await writeYearToDate(manager, ref.entityId, totalsAfter.slice(at, at + CHUNK_SIZE));
      }
    });
  }

  /** One pay run inside the caller's transaction, from the stored employer. */
  private async runInTransaction(manager: EntityManager, entityId: string, request: RunRequest): Promise<PaymentRecord | undefined> {
    await this.lockEmployer(manager, entityId);
    const payDate = request.payDate ?? (await this.defaultPayDate(manager, entityId));
    const period = request.period ?? payPeriodOf(payDate);
    if (request.period && request.period.frequency === undefined) {
      request = { ...request, period: { ...request.period, frequency: await this.scheduleFrequency(manager, entityId) } };
    }
    if (request.individualIds) await this.checkPayable(manager, entityId, request.individualIds, period);
    if (request.statements) await this.checkPayable(manager, entityId, [...request.statements.keys()], period);
    // A regular run applies the pending adjustments and consumes them all, those of people it does not pay too.
    const adjustments = request.kind === 'regular_payroll' ? await readPayRunAdjustments(manager, entityId, payDate) : undefined;
    const payment = await this.payRun(manager, entityId, { ...request, payDate, adjustments }, new StoredPayRunSource(manager, entityId, request.individualIds));
    if (payment && adjustments) await clearPayAdjustments(manager, entityId);
    return payment;
  }

  /**
   * Pays every employee of `source` paid by payroll in the period, a chunk at a time: computes
   * each statement, writes the chunk's statements, and finally the payment with the sums.
   * Undefined (and nothing written) when nobody is paid.
   */
  private async payRun(
    manager: EntityManager,
    entityId: string,
    request: RunRequest & { payDate: string },
    source: PayRunSource,
  ): Promise<PaymentRecord | undefined> {
    const { start_date, end_date, frequency, days } = request.period ?? { ...payPeriodOf(request.payDate), frequency: 'bi_weekly' as const, days: undefined };
    const run: PayRun = {
      kind: request.kind,
      payDate: request.payDate,
      period: { start_date, end_date },
      frequency: frequency ?? 'bi_weekly',
      ...(days !== undefined && { periodDays: days }),
      earnings: request.earnings,
    };
    const benefits = new Map((await this.readBenefits(manager, entityId)).map((b) => [b.benefit_id, b]));
    const totals = new PaymentTotals();
    let writing: Promise<void> = Promise.resolve();
    for await (const people of source.chunks()) {
      const paid = people.filter((person) => isPaidInPeriod(person.employment, run.period));
      if (paid.length === 0) continue;
      const ids = paid.map((p) => p.individual.id);
      const enrollments = await source.enrollmentsInForce(run.payDate, ids);
      const yearToDate = await source.yearToDate(ids);
      const statements: PayStatementRecord[] = [];
      const totalsAfter: YearToDateRow[] = [];
      for (const person of paid) {
        const id = person.individual.id;
        const given = request.statements?.get(id);
        // Adjustments act on computed statements only; a `keep` adds the ended enrollment to the computation.
        const adjusting = given ? undefined : request.adjustments?.forPerson(id, enrollments.get(id) ?? [], benefits);
        const inForce = (enrollments.get(id) ?? [])
          .filter((e) => benefits.has(e.benefit_id))
          .map((e) => enrollmentInForceOf(benefits.get(e.benefit_id)!, e))
          .concat(adjusting?.kept ?? []);
        let statement: PayStatementRecord;
        let after: YearToDate;
        if (given) {
          statement = given;
          after = computeOrRefuse(() =>
            yearToDateAfterWritten({ payDate: run.payDate, statement: writtenStatementOf(given), enrollments: inForce, yearToDate: yearToDate.get(id) ?? null }),
          );
        } else {
          const result = computeOrRefuse(() => computePayStatement(payStatementInputOf(person, run, inForce, yearToDate.get(id) ?? null)));
          statement = toPayStatementRecord(id, person.paymentMethod, result.statement);
          after = result.yearToDate;
          const adjusted = adjusting ? adjusting.apply(statement) : statement;
          if (adjusted !== statement) {
            // The running totals count what the adjusted statement shows, as for one given as written.
            statement = adjusted;
            after = computeOrRefuse(() =>
              yearToDateAfterWritten({ payDate: run.payDate, statement: writtenStatementOf(adjusted), enrollments: inForce, yearToDate: yearToDate.get(id) ?? null }),
            );
          }
        }
        statements.push(statement);
        totalsAfter.push({ individual_id: id, year: after.year, totals: after });
        totals.add(statement, person.employment.pay_group_ids ?? []);
      }
      // One write in flight while the next chunk is computed: the database and the computation
      // overlap, and at most two chunks are in memory.
      await writing;
      writing = insertPayStatements(manager, entityId, request.paymentId, statements);
      writing.catch(() => undefined); // awaited (and rethrown) before anything else is written
      await source.keepYearToDate(totalsAfter);
    }
    await writing;
    if (totals.individualIds.length === 0) return undefined;
    const payment = totals.toPayment(request.paymentId, run, debitDateOf(run.payDate));
    await manager.query(
      `INSERT INTO sandbox_payments (entity_id, id, pay_date, kind, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [entityId, payment.id, run.payDate, run.kind, JSON.stringify(payment), this.clock.now()],
    );
    return payment;
  }

  /** Chosen individuals must exist and be paid by payroll in the run's period. */
  private async checkPayable(
    manager: EntityManager,
    entityId: string,
    requested: string[],
    period: { start_date: string; end_date: string },
  ): Promise<void> {
    const rows: { id: string; employment: EmploymentRecord }[] = await manager.query(
      `SELECT id, employment FROM sandbox_individuals WHERE entity_id = $1 AND id = ANY($2::uuid[])`,
      [entityId, uuidsOf(requested)],
    );
    const found = new Map(rows.map((r) => [r.id, r.employment]));
    const unknown = requested.filter((id) => !found.has(String(id).toLowerCase()));
    if (unknown.length > 0) throw invalidRequest(`Unknown individual ids: ${unknown.join(', ')}`);
    const unpaid = rows.filter((r) => !isPaidInPeriod(r.employment, period)).map((r) => r.id);
    if (unpaid.length > 0) {
      throw invalidRequest(
        `Not paid by payroll for the period ${period.start_date} to ${period.end_date} (contractors, or not employed then): ${unpaid.join(', ')}`,
      );
    }
  }

  /** 14 days after the latest regular run, or today when that is earlier; today with no runs. */
  private async defaultPayDate(manager: EntityManager, entityId: string): Promise<string> {
    const today = toIsoDate(this.clock.now());
    const [{ latest }] = await manager.query(
      `SELECT to_char(max(pay_date), 'YYYY-MM-DD') AS latest FROM sandbox_payments WHERE entity_id = $1 AND kind = 'regular_payroll'`,
      [entityId],
    );
    if (latest === null) return today;
    const next = addDays(latest, 14);
    return next > today ? next : today;
  }

  private async lockEmployer(manager: EntityManager, entityId: string): Promise<void> {
    await manager.query(`SELECT 1 FROM sandbox_employers WHERE entity_id = $1 FOR UPDATE`, [entityId]);
  }

  /** The employer's pay schedule: the first frequency of its first pay group, bi-weekly (the calendar's) without one. */
  private async scheduleFrequency(manager: EntityManager, entityId: string): Promise<SandboxPayFrequency> {
    const [group]: { frequency: string | null }[] = await manager.query(
      `SELECT pay_frequencies[1] AS frequency FROM sandbox_pay_groups WHERE entity_id = $1 ORDER BY name, id LIMIT 1`,
      [entityId],
    );
    const frequency = group?.frequency;
    return frequency === 'weekly' || frequency === 'bi_weekly' || frequency === 'semi_monthly' || frequency === 'monthly' ? frequency : 'bi_weekly';
  }

  private async readPayGroups(ref: EmployerRef, id?: string): Promise<PayGroupRecord[]> {
    await this.ensureEmployer(ref);
    return this.dataSource.query(
      `SELECT g.id, g.name, g.pay_frequencies,
              coalesce(array_agg(i.id ORDER BY i.position) FILTER (WHERE i.id IS NOT NULL), '{}') AS individual_ids
       FROM sandbox_pay_groups g
       LEFT JOIN sandbox_individuals i ON i.entity_id = g.entity_id AND (i.employment -> 'pay_group_ids') ? g.id::text
       WHERE g.entity_id = $1 AND ($2::uuid IS NULL OR g.id = $2)
       GROUP BY g.id, g.name, g.pay_frequencies ORDER BY g.name, g.id`,
      [ref.entityId, id ?? null],
    );
  }

  private async readBenefits(manager: EntityManager, entityId: string, id?: string): Promise<SandboxBenefit[]> {
    return manager.query(
      `SELECT id AS benefit_id, type, description, frequency, company_contribution FROM sandbox_benefits
       WHERE entity_id = $1 AND ($2::uuid IS NULL OR id = $2) ORDER BY created_at, id`,
      [entityId, id ?? null],
    );
  }
}

interface YearToDateRow {
  individual_id: string;
  year: number;
  totals: YearToDate;
}

/** Where a pay run reads its employees, their enrollments and running totals, and keeps the new totals. */
interface PayRunSource {
  /** Employees in directory order, a chunk at a time. */
  chunks(): AsyncIterable<SandboxPerson[]>;
  enrollmentsInForce(payDate: string, individualIds: string[]): Promise<Map<string, SandboxEnrollment[]>>;
  yearToDate(individualIds: string[]): Promise<Map<string, YearToDate>>;
  keepYearToDate(rows: YearToDateRow[]): Promise<void>;
}

/** The stored employer, read chunk by chunk inside the run's transaction. */
class StoredPayRunSource implements PayRunSource {
  private readonly onlyIds?: string[];

  constructor(
    private readonly manager: EntityManager,
    private readonly entityId: string,
    individualIds?: string[],
  ) {
    this.onlyIds = individualIds && uuidsOf(individualIds);
  }

  async *chunks(): AsyncIterable<SandboxPerson[]> {
    for (let after = -1; ; ) {
      const rows = await readPeoplePage(this.manager, this.entityId, after, CHUNK_SIZE, this.onlyIds);
      if (rows.length === 0) return;
      after = rows[rows.length - 1].position;
      yield rows.map(personOf);
    }
  }

  async enrollmentsInForce(payDate: string, individualIds: string[]): Promise<Map<string, SandboxEnrollment[]>> {
    const enrollments = await readEnrollmentsInForce(this.manager, this.entityId, payDate, { individualIds });
    return groupBy(enrollments, (e) => e.individual_id);
  }

  yearToDate(individualIds: string[]): Promise<Map<string, YearToDate>> {
    return readYearToDate(this.manager, this.entityId, individualIds);
  }

  keepYearToDate(rows: YearToDateRow[]): Promise<void> {
    return writeYearToDate(this.manager, this.entityId, rows);
  }
}

/** A just-generated employer, in memory: its history is computed without reading back what was written. */
class GeneratedPayRunSource implements PayRunSource {
  private readonly enrollmentsByPerson: Map<string, SandboxEnrollment[]>;
  private readonly totals = new Map<string, YearToDateRow>();

  constructor(
    private readonly people: SandboxPerson[],
    enrollments: SandboxEnrollment[],
  ) {
    this.enrollmentsByPerson = groupBy(enrollments, (e) => e.individual_id);
  }

  async *chunks(): AsyncIterable<SandboxPerson[]> {
    for (let at = 0; at < this.people.length; at += CHUNK_SIZE) yield this.people.slice(at, at + CHUNK_SIZE);
  }

  async enrollmentsInForce(payDate: string, individualIds: string[]): Promise<Map<string, SandboxEnrollment[]>> {
    return new Map(individualIds.map((id) => [id, enrollmentsInForceOn(this.enrollmentsByPerson.get(id) ?? [], payDate)]));
  }

  async yearToDate(individualIds: string[]): Promise<Map<string, YearToDate>> {
    const found = new Map<string, YearToDate>();
    for (const id of individualIds) {
      const row = this.totals.get(id);
      if (row) found.set(id, row.totals);
    }
    return found;
  }

  async keepYearToDate(rows: YearToDateRow[]): Promise<void> {
    for (const row of rows) this.totals.set(row.individual_id, row);
  }

  yearToDateRows(): YearToDateRow[] {
    return [...this.totals.values()];
  }
}

/** The computation refuses impossible input (e.g. negative earnings) with a RangeError: a bad request. */
function computeOrRefuse<T>(compute: () => T): T {
  try {
    return compute();
  } catch (error) {
    if (error instanceof RangeError) throw invalidRequest(`The pay run cannot be computed: ${error.message}`);
    throw error;
  }
}

/** A given period, checked: its frequency follows from its shape, and the pay date is given with it. */
function periodWithFrequency(period: { start_date: string; end_date: string }, payDate: string | undefined): RunRequest['period'] {
  if (!isIsoDate(period.start_date) || !isIsoDate(period.end_date) || period.end_date < period.start_date) {
    throw invalidRequest(`The pay period must be two dates as YYYY-MM-DD, the start first, not ${period.start_date} to ${period.end_date}`);
  }
  if (payDate === undefined) throw invalidRequest('A pay run for a given period needs its pay date');
  const frequency = payFrequencyOfPeriod(period);
  // A period of no frequency's shape (a few days, six weeks) is paid for its days.
  if (!frequency) return { start_date: period.start_date, end_date: period.end_date, frequency: undefined, days: daysBetween(period.start_date, period.end_date) + 1 };
  return { start_date: period.start_date, end_date: period.end_date, frequency };
}

/** Given statements by individual id (lower case): one each, and not with a choice of individuals. */
function statementsById(statements: PayStatementRecord[], individualIds: string[] | undefined): Map<string, PayStatementRecord> {
  if (individualIds !== undefined) throw invalidRequest('A pay run takes given statements or chosen individuals, not both');
  const byId = new Map<string, PayStatementRecord>();
  for (const statement of statements) {
    const id = String(statement.individual_id).toLowerCase();
    if (byId.has(id)) throw invalidRequest(`Two statements for individual ${statement.individual_id} in one payment`);
    byId.set(id, { ...statement, individual_id: id });
  }
  return byId;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function personOf(row: PersonRow): SandboxPerson {
  return { individual: row.individual, employment: row.employment, paymentMethod: row.payment_method };
}

async function readPeoplePage(
  manager: EntityManager,
  entityId: string,
  afterPosition: number,
  size: number,
  onlyIds?: string[],
): Promise<PersonRow[]> {
  return manager.query(
    `SELECT id, position, individual, employment, payment_method FROM sandbox_individuals
     WHERE entity_id = $1 AND position > $2 AND ($4::uuid[] IS NULL OR id = ANY($4::uuid[]))
     ORDER BY position LIMIT $3`,
    [entityId, afterPosition, size, onlyIds ?? null],
  );
}

async function insertPeople(manager: EntityManager, entityId: string, people: SandboxPerson[], firstPosition: number): Promise<void> {
  const rows = people.map((p, i) => ({
    id: p.individual.id,
    position: firstPosition + i,
    individual: p.individual,
    employment: p.employment,
    payment_method: p.paymentMethod,
  }));
  await manager.query(
    `INSERT INTO sandbox_individuals (entity_id, id, position, individual, employment, payment_method)
     SELECT $1, p.id, p.position, p.individual, p.employment, p.payment_method
     FROM jsonb_to_recordset($2::jsonb) AS p(id uuid, position int, individual jsonb, employment jsonb, payment_method text)`,
    [entityId, JSON.stringify(rows)],
  );
}

async function insertBenefits(manager: EntityManager, entityId: string, benefits: SandboxBenefit[], createdAt: Date): Promise<void> {
  if (benefits.length === 0) return;
  // Creation order is the list order (microseconds apart), so "oldest first" is stable.
  await manager.query(
    `INSERT INTO sandbox_benefits (entity_id, id, type, description, frequency, company_contribution, created_at)
     SELECT $1, (b ->> 'benefit_id')::uuid, b ->> 'type', b ->> 'description', b ->> 'frequency',
            nullif(b -> 'company_contribution', 'null'::jsonb), $3::timestamptz + (ord * interval '1 microsecond')
     FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS x(b, ord)`,
    [entityId, JSON.stringify(benefits), createdAt],
  );
}

const ENROLLMENT_ROWS = new ColumnSet<{ benefit_id: string; individual_id: string; effective_date: string; configuration: SandboxEnrollmentConfiguration; ended_on: string | null }>({
  benefit_id: 'uuid',
  individual_id: 'uuid',
  effective_date: 'date',
  configuration: 'jsonb',
  ended_on: 'date',
});

async function insertEnrollments(manager: EntityManager, entityId: string, enrollments: SandboxEnrollment[], now: Date): Promise<void> {
  if (enrollments.length === 0) return;
  const at = ENROLLMENT_ROWS.count + 1;
  await manager.query(
    `INSERT INTO sandbox_enrollments (entity_id, benefit_id, individual_id, effective_date, configuration, ended_on, updated_at)
     SELECT $${at}, u.benefit_id, u.individual_id, u.effective_date, u.configuration, u.ended_on, $${at + 1}
     FROM ${ENROLLMENT_ROWS.from(1)}
     ON CONFLICT (entity_id, benefit_id, individual_id, effective_date)
     DO UPDATE SET configuration = excluded.configuration, ended_on = excluded.ended_on, updated_at = excluded.updated_at`,
    [...ENROLLMENT_ROWS.values(enrollments), entityId, now],
  );
}

/**
 * One row per (individual, date): a repeated one in one call keeps its last configuration (and a
 * statement may write a row once). Dates are checked first: a bad one fails the whole call.
 */
function uniqueEnrollments<E extends { individual_id: string; effective_date: string }>(enrollments: readonly E[]): E[] {
  const badDates = enrollments.filter((e) => !isIsoDate(e.effective_date)).map((e) => e.effective_date);
  if (badDates.length > 0) throw invalidRequest(`effective_date must be YYYY-MM-DD: ${badDates.join(', ')}`);
  return [...new Map(enrollments.map((e) => [`${e.individual_id.toLowerCase()}|${e.effective_date}`, e])).values()];
}

/** insertEnrollments for the employer's people among these, in the benefit if the employer has it; answers whether it has, and who was written. */
function enrollKnownPeople(entityId: string, benefitId: string, enrollments: SandboxEnrollment[], now: Date): [string, unknown[]] {
  const at = ENROLLMENT_ROWS.count + 1;
  return [
    `WITH benefit AS (SELECT id FROM sandbox_benefits WHERE entity_id = $${at} AND id = $${at + 1}),
     written AS (
       INSERT INTO sandbox_enrollments (entity_id, benefit_id, individual_id, effective_date, configuration, ended_on, updated_at)
       SELECT $${at}, b.id, u.individual_id, u.effective_date, u.configuration, u.ended_on, $${at + 2}
       FROM ${ENROLLMENT_ROWS.from(1)}
       JOIN sandbox_individuals i ON i.entity_id = $${at} AND i.id = u.individual_id
       CROSS JOIN benefit b
       ON CONFLICT (entity_id, benefit_id, individual_id, effective_date)
       DO UPDATE SET configuration = excluded.configuration, ended_on = excluded.ended_on, updated_at = excluded.updated_at
       RETURNING individual_id)
     SELECT EXISTS (SELECT 1 FROM benefit) AS benefit_known,
            ARRAY(SELECT DISTINCT individual_id::text FROM written) AS enrolled`,
    [...ENROLLMENT_ROWS.values(enrollments), entityId, benefitId, now],
  ];
}

async function readEnrollmentsInForce(
  manager: EntityManager,
  entityId: string,
  onDate: string,
  filter: { benefitId?: string; individualIds?: string[] },
): Promise<SandboxEnrollment[]> {
  return manager.query(
    `SELECT benefit_id, individual_id, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, configuration,
            to_char(ended_on, 'YYYY-MM-DD') AS ended_on
     FROM (
       SELECT DISTINCT ON (benefit_id, individual_id) benefit_id, individual_id, effective_date, configuration, ended_on
       FROM sandbox_enrollments
       WHERE entity_id = $1 AND effective_date <= $2::date
         AND ($3::uuid IS NULL OR benefit_id = $3) AND ($4::uuid[] IS NULL OR individual_id = ANY($4::uuid[]))
       ORDER BY benefit_id, individual_id, effective_date DESC
     ) latest
     WHERE ended_on IS NULL OR ended_on > $2::date
     ORDER BY benefit_id, individual_id`,
    [entityId, onDate, filter.benefitId ?? null, filter.individualIds ?? null],
  );
}

/** Multi-row VALUES, one parameter per body: each body is parsed once, as `json` (see the migration). */
async function insertPayStatements(manager: EntityManager, entityId: string, paymentId: string, statements: PayStatementRecord[]): Promise<void> {
  const params: unknown[] = [entityId, paymentId];
  const rows = statements.map((statement) => {
    params.push(statement.individual_id, JSON.stringify(statement));
    return `($1, $2, $${params.length - 1}::uuid, $${params.length}::json)`;
  });
  await manager.query(`INSERT INTO sandbox_pay_statements (entity_id, payment_id, individual_id, body) VALUES ${rows.join(', ')}`, params);
}

async function writeYearToDate(manager: EntityManager, entityId: string, rows: YearToDateRow[]): Promise<void> {
  await manager.query(
    `INSERT INTO sandbox_year_to_date (entity_id, individual_id, year, totals)
     SELECT $1, t.individual_id, t.year, t.totals FROM jsonb_to_recordset($2::jsonb) AS t(individual_id uuid, year int, totals jsonb)
     ON CONFLICT (entity_id, individual_id) DO UPDATE SET year = excluded.year, totals = excluded.totals`,
    [entityId, JSON.stringify(rows)],
  );
}

async function readYearToDate(manager: EntityManager, entityId: string, ids: string[]): Promise<Map<string, YearToDate>> {
  const rows: { individual_id: string; totals: YearToDate }[] = await manager.query(
    `SELECT individual_id, totals FROM sandbox_year_to_date WHERE entity_id = $1 AND individual_id = ANY($2::uuid[])`,
    [entityId, ids],
  );
  return new Map(rows.map((r) => [r.individual_id, r.totals]));
}
