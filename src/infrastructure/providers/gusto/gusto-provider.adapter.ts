import {
  CompanyRecord,
  DirectoryEntry,
  EmploymentRecord,
  IndividualRecord,
  PayGroupRecord,
  PaymentRecord,
  PayStatementRecord,
} from '../../../domain/employer/unified-records';
import {
  EmployerRef,
  ForwardRequest,
  ForwardResponse,
  Page,
  Paged,
  ProviderBenefit,
  ProviderChange,
  ProviderChangeResult,
  ProviderEnrollment,
  ProviderEnrollmentConfiguration,
  ProviderIndividualResult,
  ProviderPort,
  SnapshotBatch,
} from '../../../domain/providers/provider-port';
import { Clock, SystemClock } from '../../../domain/shared/clock';
import { DomainError, invalidRequest } from '../../../domain/shared/domain-error';
import { BenefitLink, ProviderBenefitLinks } from '../provider-benefit-links';
import { GustoAccess } from './gusto-access';
import { GustoApiError, GustoConflict, GustoEntityError, GustoHttp, GustoMethod, GustoQuery, GustoResponse, GustoUnprocessable } from './gusto-http';
import {
  benefitTypesByName,
  CompanyFromGusto,
  companyBenefitBodyOf,
  companyRecordOf,
  directoryEntryOf,
  employeeBenefitBodyOf,
  EmploymentFromGusto,
  employmentRecordOf,
  enrollmentConfigurationOf,
  IndividualFromGusto,
  individualRecordOf,
  matchOf,
  payGroupRecordOf,
  paymentRecordOf,
  PayStatementFromGusto,
  payStatementRecordsOf,
  providerBenefitOf,
} from './gusto-mapping';
import {
  GustoCompany,
  GustoCompanyBenefit,
  GustoEmployee,
  GustoEmployeeBenefit,
  GustoEmployeeBenefitCreateBody,
  GustoEmployeeBenefitRead,
  GustoPayroll,
  GustoPaySchedule,
} from './gusto-types';

export interface GustoProviderAdapterOptions {
  /** Fresh reads after a 409 (a version moved) before an individual's or a benefit's write gives up. Default 3. */
  maxConflictRetries?: number;
  /** Individuals written at once; every request still waits for the grant's rate limiter. Default 4. */
  concurrency?: number;
  /** Today, for Gusto's payroll date windows. */
  clock?: Clock;
}

/** Gusto's largest page (payroll compensations: "a maximum page size of 100"). */
const PER = 100;
/** Records per snapshot batch, as the sandbox: flat memory whatever the headcount. */
const SNAPSHOT_BATCH_SIZE = 500;
/** Payroll history a snapshot reads when Gusto does not say when the company joined. */
const DEFAULT_HISTORY_YEARS = 5;
/** Writes one individual's change may take (deletes of later windows, a close, a create): a loop guard, not a limit Gusto sets. */
const MAX_STEPS_PER_INDIVIDUAL = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FORWARD_METHODS: ReadonlySet<string> = new Set<GustoMethod>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
/** Connection-level headers of Gusto's answer: meaningless once the body is re-sent by us. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'set-cookie']);

/** Fields of GET /v1/companies/{id} this adapter reads beyond the mapping's. */
interface GustoCompanyWithSchedules extends GustoCompany {
  /** `single`: every employee is paid on the company's one pay schedule. */
  pay_schedule_type?: 'single' | 'hourly_salaried' | 'by_employee' | 'by_department' | null;
  join_date?: string | null;
}

/** What the link keeps that Gusto cannot: the employer match, set on each employee benefit instead. */
interface LinkSettings {
  company_contribution?: ProviderBenefit['company_contribution'];
}

/** One individual's change, as enroll, unenroll and applyChanges all ask for it. */
interface Change {
  individualId: string;
  effectiveDate: string;
  /** null: end the enrollment from `effectiveDate` on. */
  configuration: ProviderEnrollmentConfiguration | null;
}

/** The next write that brings one individual's employee benefits to the change asked for. */
type Step =
  | { kind: 'create'; body: GustoEmployeeBenefitCreateBody }
  | { kind: 'update'; window: GustoEmployeeBenefit; body: { version: string } & Record<string, unknown> }
  | { kind: 'delete'; window: GustoEmployeeBenefit };

/**
 * The provider port over Gusto's API, for one connection's company (the grant's). Reads map
 * Gusto's objects through gusto-mapping.ts; benefit writes are idempotent and never repeated
 * blindly: each call reads Gusto's state first, writes only the difference, with the version it
 * read, and reads again on a 409. Transient failures (provider_error, provider_timeout) are
 * thrown: the job worker runs the whole call again, and the fresh read makes that safe.
 *
 * Enrollments are Gusto's effective-dated employee benefits
 * (https://docs.gusto.com/embedded-payroll/docs/benefit-effective-dating): windows
 * [effective_date, expiration_date] of one company benefit per employee, not overlapping; a
 * window applies to a payroll whose pay period ends inside it. The port's "from date D on" is a
 * window starting on D with no expiration; an end on D is the covering window's
 * `expiration_date` set to D - 1 (the guide's own rule when it closes a window).
 */
export class GustoProviderAdapter implements ProviderPort {
  private readonly maxConflictRetries: number;
  private readonly concurrency: number;
  private readonly clock: Clock;

  constructor(
    private readonly http: GustoHttp,
    private readonly access: GustoAccess,
    private readonly links: ProviderBenefitLinks,
    options: GustoProviderAdapterOptions = {},
  ) {
    this.maxConflictRetries = Math.max(0, options.maxConflictRetries ?? 3);
    this.concurrency = Math.max(1, options.concurrency ?? 4);
    this.clock = options.clock ?? new SystemClock();
  }

  // ---------------------------------------------------------------------------------------------
  // Employer data

  async company(ref: EmployerRef): Promise<CompanyRecord> {
    // Departments and phone-carrying locations are other operations (…/departments, …/locations);
    // the company object's own locations are used.
    return this.session(ref, async (api) => asCompany(companyRecordOf(await api.company())));
  }

  /** The port's limit/offset over Gusto's page/per: the pages that cover the slice, and X-Total-Count. */
  async directory(ref: EmployerRef, page: Page): Promise<Paged<DirectoryEntry>> {
    return this.session(ref, async (api) => {
      const path = api.companyPath('/employees');
      const firstPage = Math.floor(page.offset / PER) + 1;
      const lastPage = Math.floor((page.offset + Math.max(page.limit, 1) - 1) / PER) + 1;
      const employees: GustoEmployee[] = [];
      let count: number | undefined;
      for (let p = firstPage; p <= lastPage; p++) {
        const answer = await api.get<GustoEmployee[]>(path, { page: p, per: PER });
        employees.push(...(answer.body ?? []));
        count = headerInt(answer.headers, 'x-total-count') ?? count;
        if ((answer.body ?? []).length < PER) break;
      }
      if (count === undefined) {
        // No total from Gusto: count the whole listing rather than guess.
        const all = await api.list<GustoEmployee>(path);
        return { count: all.length, offset: page.offset, items: all.slice(page.offset, page.offset + page.limit).map(directoryEntryOf) };
      }
      const start = page.offset - (firstPage - 1) * PER;
      return { count, offset: page.offset, items: employees.slice(start, start + page.limit).map(directoryEntryOf) };
    });
  }

  async individuals(ref: EmployerRef, ids: string[]): Promise<IndividualRecord[]> {
    return this.session(ref, async (api) => {
      const employees = await api.employees(ids, 'current_home_address');
      return employees.map((employee) => asIndividual(individualRecordOf(employee)));
    });
  }

  async employments(ref: EmployerRef, ids: string[]): Promise<EmploymentRecord[]> {
    return this.session(ref, async (api) => {
      const { singleSchedule } = await api.schedules();
      const employees = await api.employees(ids, 'all_compensations');
      return employees.map((employee) => asEmployment(employmentRecordOf(employee, payGroupsOf(employee, singleSchedule))));
    });
  }

  /** Processed payrolls (regular and off-cycle) whose check date is within the range, oldest first. */
  async payments(ref: EmployerRef, startDate: string, endDate: string): Promise<PaymentRecord[]> {
    return this.session(ref, async (api) => {
      const { schedules } = await api.schedules();
      const payments: PaymentRecord[] = [];
      for (const listed of await api.processedPayrolls(startDate, endDate, this.today())) {
        // The listing has no employee compensations, hence no individual_ids: each payroll is read.
        const payroll = await api.payroll(payrollIdOf(listed), ['totals']);
        if (payroll) payments.push(paymentRecordOf(payroll, schedules));
      }
      return payments;
    });
  }

  async payStatements(ref: EmployerRef, paymentId: string, page: Page): Promise<Paged<PayStatementRecord> | undefined> {
    if (!UUID.test(paymentId)) return undefined;
    return this.session(ref, async (api) => {
      const payroll = await api.payroll(paymentId, ['benefits', 'deductions', 'taxes']);
      // An unprocessed payroll has no statements yet: not a payment.
      if (!payroll || payroll.processed === false) return undefined;
      const types = benefitTypesByName(await api.companyBenefits());
      const statements = payStatementRecordsOf(payroll, types).sort((a, b) => compareText(a.individual_id, b.individual_id));
      return { count: statements.length, offset: page.offset, items: statements.slice(page.offset, page.offset + page.limit).map(asPayStatement) };
    });
  }

  async payGroups(ref: EmployerRef): Promise<PayGroupRecord[]> {
    return this.session(ref, (api) => api.payGroups());
  }

  async payGroup(ref: EmployerRef, id: string): Promise<PayGroupRecord | undefined> {
    return (await this.payGroups(ref)).find((group) => group.id.toLowerCase() === id.toLowerCase());
  }

  /**
   * Everything, page by page: company; individuals and employments per 500 employees; pay
   * groups; then each processed payroll, read once, as its payment followed by its statements
   * (payments are not all sent before all statements: that would read every payroll twice or
   * hold the whole pay history in memory; the sync stores the kinds independently).
   */
  async *snapshot(ref: EmployerRef): AsyncIterable<SnapshotBatch> {
    const company = await this.session(ref, (api) => api.company());
    yield { kind: 'company', records: [asCompany(companyRecordOf(company))] };
    const { schedules, singleSchedule } = await this.session(ref, (api) => api.schedules());

    const paid: string[] = [];
    let people: GustoEmployee[] = [];
    const flush = (): SnapshotBatch[] => {
      const batches: SnapshotBatch[] = [
        { kind: 'individual', records: people.map((e) => asIndividual(individualRecordOf(e))) },
        { kind: 'employment', records: people.map((e) => asEmployment(employmentRecordOf(e, payGroupsOf(e, singleSchedule)))) },
      ];
      people = [];
      return batches;
    };
    for (let page = 1; ; page++) {
      const answer = await this.session(ref, (api) =>
        api.get<GustoEmployee[]>(api.companyPath('/employees'), { page, per: PER, include: 'all_compensations,current_home_address' }),
      );
      const employees = answer.body ?? [];
      people.push(...employees);
      paid.push(...employees.filter((e) => e.terminated !== true).map((e) => e.uuid));
      if (people.length >= SNAPSHOT_BATCH_SIZE) yield* flush();
      if (isLastPage(answer, page, employees.length)) break;
    }
    if (people.length > 0) yield* flush();
    yield { kind: 'pay_group', records: schedules.map((s) => payGroupRecordOf(s, s.uuid === singleSchedule ? paid : [])) };

    const today = this.today();
    const since = company.join_date && /^\d{4}-\d{2}-\d{2}$/.test(company.join_date) ? company.join_date : addYears(today, -DEFAULT_HISTORY_YEARS);
    const benefitTypes = benefitTypesByName(await this.session(ref, (api) => api.companyBenefits()));
    const listed = await this.session(ref, (api) => api.processedPayrolls(since, today, today));
    for (const entry of listed) {
      const payroll = await this.session(ref, (api) => api.payroll(payrollIdOf(entry), ['benefits', 'deductions', 'taxes', 'totals']));
      if (!payroll) continue;
      const payment = paymentRecordOf(payroll, schedules);
      yield { kind: 'payment', records: [payment] };
      const statements = payStatementRecordsOf(payroll, benefitTypes).sort((a, b) => compareText(a.individual_id, b.individual_id));
      for (let at = 0; at < statements.length; at += SNAPSHOT_BATCH_SIZE) {
        yield {
          kind: 'pay_statement',
          records: statements.slice(at, at + SNAPSHOT_BATCH_SIZE).map((s) => ({ payment_id: payment.id, pay_date: payment.pay_date, statement: asPayStatement(s) })),
        };
      }
    }
  }

  /**
   * One request to Gusto's API (`/v1/…`) with the connection's token, answered as Gusto answered
   * it. Gusto's refusals (4xx) are the answer, with Gusto's `errors`; a 401 refreshes the token
   * (GustoAccess); 5xx, timeouts and an exhausted rate limit are thrown as transient. The
   * caller's headers are not sent: GustoHttp sets Gusto's own (token, API version, JSON).
   */
  async forward(ref: EmployerRef, request: ForwardRequest): Promise<ForwardResponse> {
    const method = request.method.toUpperCase();
    if (!FORWARD_METHODS.has(method)) throw invalidRequest(`Gusto takes GET, POST, PUT, PATCH and DELETE, not ${request.method}`);
    // The token reaches the company's API only: no /oauth, no other host, no climbing out of /v1.
    if (!/^\/v1\/[A-Za-z0-9_\-/.]*$/.test(request.route) || request.route.split('/').includes('..')) {
      throw invalidRequest(`A Gusto route starts with /v1/ and holds only letters, digits, -, _ and /: ${request.route.slice(0, 200)}`);
    }
    return this.session(ref, async (api) => {
      try {
        const answer = await api.send<unknown>(method as GustoMethod, request.route, forwardBodyOf(method, request.data), forwardQueryOf(request.params));
        return { status_code: answer.status, headers: forwardHeadersOf(answer.headers), data: answer.body ?? null };
      } catch (error) {
        const final = error instanceof GustoApiError && error.status !== undefined && error.status !== 401 && !isTransient(error);
        if (!final) throw error;
        return { status_code: error.status!, headers: {}, data: error.errors.length > 0 ? { errors: error.errors } : null };
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Company benefits: the service's benefits are the company benefits it linked (ProviderBenefitLinks)

  async benefits(ref: EmployerRef): Promise<ProviderBenefit[]> {
    const links = await this.links.ofEntity(ref.connectionId, ref.entityId);
    if (links.length === 0) return [];
    const atGusto = new Map((await this.session(ref, (api) => api.companyBenefits())).map((b) => [b.uuid, b]));
    return links.flatMap((link) => {
      const benefit = atGusto.get(link.externalId);
      const mapped = benefit ? providerBenefitOf(benefit, link.benefitId, matchSettingOf(link)) : null;
      return mapped ? [mapped] : [];
    });
  }

  async benefit(ref: EmployerRef, benefitId: string): Promise<ProviderBenefit | undefined> {
    const link = await this.links.find(ref.connectionId, ref.entityId, benefitId);
    if (!link) return undefined;
    const benefit = await this.session(ref, (api) => api.companyBenefit(link.externalId));
    return (benefit && providerBenefitOf(benefit, benefitId, matchSettingOf(link))) ?? undefined;
  }

  /**
   * Linked already: answered as it is. Else a company benefit of the same Gusto type and
   * description that no benefit of this entity has is taken as ours (a create whose answer was
   * lost) and linked; else one is created and linked. A create whose outcome is unknown (5xx,
   * timeout) is thrown as transient and never repeated here: the retried call finds it.
   */
  async createBenefit(ref: EmployerRef, benefit: ProviderBenefit): Promise<ProviderBenefit> {
    const linked = await this.links.find(ref.connectionId, ref.entityId, benefit.benefit_id);
    if (linked) {
      const atGusto = await this.session(ref, (api) => api.companyBenefit(linked.externalId));
      if (atGusto) return providerBenefitOf(atGusto, benefit.benefit_id, matchSettingOf(linked)) ?? unmappable(atGusto);
      // Deleted in Gusto after we created it: creating another would not be the benefit linked.
      throw new DomainError('conflict_error', `Benefit ${benefit.benefit_id} is linked to Gusto company benefit ${linked.externalId}, which no longer exists`, {
        serviceCode: 'provider_benefit_missing',
      });
    }
    // Refused here (unsupported type or frequency) before anything is sent.
    const body = companyBenefitBodyOf(benefit);
    const settings: LinkSettings = { company_contribution: benefit.company_contribution };
    const taken = new Set((await this.links.ofEntity(ref.connectionId, ref.entityId)).map((l) => l.externalId));
    const companyBenefit = await this.session(ref, async (api) => {
      const sameType = await api.companyBenefits(body.benefit_type);
      const lost = sameType.find(
        (b) => !taken.has(b.uuid) && b.active !== false && b.benefit_type === body.benefit_type && (b.description ?? '').trim() === body.description.trim(),
      );
      if (lost) return lost;
      return (await api.send<GustoCompanyBenefit>('POST', api.companyPath('/company_benefits'), body)).body;
    });
    const link = await this.links.link({ connectionId: ref.connectionId, entityId: ref.entityId, benefitId: benefit.benefit_id, externalId: companyBenefit.uuid, settings: { ...settings } });
    if (!link) {
      // Another call linked this benefit first (or the company benefit to another): answer what stands.
      const standing = await this.benefit(ref, benefit.benefit_id);
      if (standing) return standing;
      throw new GustoApiError('provider_error', `Gusto company benefit ${companyBenefit.uuid} is linked to another benefit; retry to create ${benefit.benefit_id}`, {
        attempts: 1,
      });
    }
    return providerBenefitOf(companyBenefit, benefit.benefit_id, settings.company_contribution) ?? unmappable(companyBenefit);
  }

  /** Read with its version, PUT with it; on 409 read again and re-apply, a bounded number of times. */
  async updateBenefit(ref: EmployerRef, benefitId: string, patch: { description: string }): Promise<ProviderBenefit | undefined> {
    const link = await this.links.find(ref.connectionId, ref.entityId, benefitId);
    if (!link) return undefined;
    const updated = await this.session(ref, async (api) => {
      for (let conflicts = 0; ; conflicts++) {
        const current = await api.companyBenefit(link.externalId);
        if (!current) return undefined;
        if ((current.description ?? '') === patch.description) return current;
        try {
          const body = companyBenefitBodyOf(patch, current.version ?? '');
          return (await api.send<GustoCompanyBenefit>('PUT', `/v1/company_benefits/${encodeURIComponent(current.uuid)}`, body)).body;
        } catch (error) {
          if (!(error instanceof GustoConflict)) throw error;
          if (conflicts >= this.maxConflictRetries) throw stillConflicting(`company benefit ${current.uuid}`, conflicts + 1, error);
        }
      }
    });
    return (updated && providerBenefitOf(updated, benefitId, matchSettingOf(link))) ?? undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Enrollments: employee benefits of the linked company benefit

  async enroll(
    ref: EmployerRef,
    benefitId: string,
    elements: { individual_id: string; effective_date: string; configuration: ProviderEnrollmentConfiguration }[],
  ): Promise<ProviderIndividualResult[]> {
    return this.settle(
      ref,
      benefitId,
      elements.map((e) => ({ individualId: e.individual_id, effectiveDate: e.effective_date, configuration: e.configuration })),
    );
  }

  async unenroll(ref: EmployerRef, benefitId: string, individualIds: string[], onDate: string): Promise<ProviderIndividualResult[]> {
    return this.settle(
      ref,
      benefitId,
      individualIds.map((id) => ({ individualId: id, effectiveDate: onDate, configuration: null })),
    );
  }

  async applyChanges(ref: EmployerRef, benefitId: string, changes: ProviderChange[]): Promise<ProviderChangeResult[]> {
    const results = await this.settle(
      ref,
      benefitId,
      changes.map((c) => ({ individualId: c.individual_id, effectiveDate: c.effective_date, configuration: c.configuration })),
    );
    return results.map((result, i) => ({ ...result, effective_date: changes[i].effective_date }));
  }

  async enrollments(ref: EmployerRef, benefitId: string, onDate: string, individualIds?: string[]): Promise<ProviderEnrollment[]> {
    const link = await this.links.find(ref.connectionId, ref.entityId, benefitId);
    if (!link) return [];
    const wanted = individualIds && new Set(individualIds.map((id) => id.toLowerCase()));
    const all = await this.session(ref, (api) => api.employeeBenefitsOf(link.externalId));
    const enrollments: ProviderEnrollment[] = [];
    for (const [employee, windows] of byEmployee(all)) {
      if (wanted && !wanted.has(employee)) continue;
      const sorted = windows.filter((w) => w.active !== false).sort((a, b) => compareText(startOf(a), startOf(b)));
      const current = sorted.find((w) => startOf(w) <= onDate && (endOf(w) === null || endOf(w)! >= onDate));
      if (!current) continue;
      enrollments.push({
        benefit_id: benefitId,
        individual_id: current.employee_uuid ?? employee,
        effective_date: startOf(current),
        configuration: enrollmentConfigurationOf(current),
        ended_on: endOfChain(sorted, current),
      });
    }
    return enrollments.sort((a, b) => compareText(a.individual_id, b.individual_id));
  }

  /**
   * Every change of one call against one read of the benefit's employee benefits (paged), then per
   * individual the writes that differ (settleOne), a few individuals at a time.
   */
  private async settle(ref: EmployerRef, benefitId: string, changes: Change[]): Promise<ProviderIndividualResult[]> {
    const link = await this.links.find(ref.connectionId, ref.entityId, benefitId);
    if (!link) {
      if (changes.some((c) => c.configuration !== null)) throw invalidRequest(`Benefit ${benefitId} is not a benefit of this employer at Gusto`);
      return changes.map((c) => notEnrolled(c.individualId));
    }
    const match = matchSettingOf(link) ?? null;
    return this.session(ref, async (api) => {
      let enrolled: Map<string, GustoEmployeeBenefit[]>;
      try {
        enrolled = byEmployee(await api.employeeBenefitsOf(link.externalId));
      } catch (error) {
        if (!isNotFound(error)) throw error;
        throw invalidRequest(`Benefit ${benefitId} is no longer at Gusto (company benefit ${link.externalId} not found)`);
      }
      return mapLimited(changes, this.concurrency, (change) =>
        this.settleOne(api, link.externalId, match, change, enrolled.get(change.individualId.toLowerCase()) ?? []),
      );
    });
  }

  /**
   * Brings one individual's windows to the change, one write at a time, each planned from what was
   * last read or answered, so a retried call or a re-read after a 409 resumes where Gusto is.
   * Nothing Gusto holds is overwritten unread: every PUT carries the version read.
   */
  private async settleOne(
    api: GustoSession,
    companyBenefitUuid: string,
    match: ProviderBenefit['company_contribution'],
    change: Change,
    read: GustoEmployeeBenefit[],
  ): Promise<ProviderIndividualResult> {
    const id = change.individualId;
    if (!UUID.test(id)) return change.configuration ? unknownEmployee(id) : notEnrolled(id);
    let windows = read;
    if (change.configuration === null && !hasEnrollmentToEnd(windows, change.effectiveDate)) return notEnrolled(id);
    const desired =
      change.configuration &&
      employeeBenefitBodyOf(change.configuration, { effective_date: change.effectiveDate, expiration_date: null }, { company_benefit_uuid: companyBenefitUuid }, match);
    let rereads = 0;
    for (let steps = 0; steps < MAX_STEPS_PER_INDIVIDUAL; steps++) {
      const step = desired ? nextEnrollStep(windows, change.effectiveDate, desired) : nextEndStep(windows, change.effectiveDate);
      if (!step) return { individual_id: id, code: 200 };
      try {
        windows = await this.write(api, id, step, windows);
      } catch (error) {
        if (error instanceof GustoUnprocessable) return { individual_id: id, code: 422, message: gustoMessage(error) };
        if (step.kind === 'create' && isNotFound(error)) return unknownEmployee(id);
        if (step.kind === 'delete' && isNotFound(error)) {
          // Gone already: our own earlier attempt, or someone in Gusto.
          windows = windows.filter((w) => w.uuid !== step.window.uuid);
          continue;
        }
        // A version moved (or the window went) since it was read: read this individual again, re-plan.
        if (!(error instanceof GustoConflict) && !isNotFound(error)) throw error;
        if (++rereads > this.maxConflictRetries) throw stillConflicting(`employee ${id}'s benefit`, rereads, error);
        windows = await api.employeeBenefitsOfEmployee(id, companyBenefitUuid);
      }
    }
    throw new DomainError('server_error', `Gusto: employee ${id}'s benefit did not settle in ${MAX_STEPS_PER_INDIVIDUAL} writes`);
  }

  private async write(api: GustoSession, employeeId: string, step: Step, windows: GustoEmployeeBenefit[]): Promise<GustoEmployeeBenefit[]> {
    switch (step.kind) {
      case 'create': {
        const { body } = await api.send<GustoEmployeeBenefit>('POST', `/v1/employees/${encodeURIComponent(employeeId)}/employee_benefits`, step.body);
        return [...windows, body];
      }
      case 'update': {
        const { body } = await api.send<GustoEmployeeBenefit>('PUT', `/v1/employee_benefits/${encodeURIComponent(step.window.uuid)}`, step.body);
        return windows.map((w) => (w.uuid === step.window.uuid ? body : w));
      }
      case 'delete':
        await api.send<undefined>('DELETE', `/v1/employee_benefits/${encodeURIComponent(step.window.uuid)}`);
        return windows.filter((w) => w.uuid !== step.window.uuid);
    }
  }

  private session<T>(ref: EmployerRef, run: (api: GustoSession) => Promise<T>): Promise<T> {
    return this.access.withToken(ref.connectionId, (accessToken, companyUuid) => run(new GustoSession(this.http, accessToken, companyUuid, ref.connectionId)));
  }

  private today(): string {
    return this.clock.now().toISOString().slice(0, 10);
  }
}

// -----------------------------------------------------------------------------------------------
// Gusto, as one connection reaches it

/** The requests of one call, with the connection's token; the rate-limit key is the connection. */
class GustoSession {
  constructor(
    private readonly http: GustoHttp,
    private readonly accessToken: string,
    readonly companyUuid: string,
    private readonly key: string,
  ) {}

  companyPath(rest: string): string {
    return `/v1/companies/${encodeURIComponent(this.companyUuid)}${rest}`;
  }

  get<T>(path: string, query?: GustoQuery): Promise<GustoResponse<T>> {
    return this.http.request<T>({ method: 'GET', path, query, accessToken: this.accessToken, key: this.key });
  }

  send<T>(method: GustoMethod, path: string, body?: unknown, query?: GustoQuery): Promise<GustoResponse<T>> {
    return this.http.request<T>({ method, path, body, query, accessToken: this.accessToken, key: this.key });
  }

  list<T>(path: string, query?: GustoQuery): Promise<T[]> {
    return this.http.paginate<T>({ path, query, per: PER, accessToken: this.accessToken, key: this.key });
  }

  async company(): Promise<GustoCompanyWithSchedules> {
    return (await this.get<GustoCompanyWithSchedules>(this.companyPath(''))).body;
  }

  /** The given employees of this company, in the order asked, unknown ids left out (`uuids` filter, 100 a request). */
  async employees(ids: string[], include: string): Promise<GustoEmployee[]> {
    const wanted = [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
    const found = new Map<string, GustoEmployee>();
    for (let at = 0; at < wanted.length; at += PER) {
      const chunk = wanted.slice(at, at + PER);
      for (const employee of await this.list<GustoEmployee>(this.companyPath('/employees'), { uuids: chunk.join(','), include })) {
        found.set(employee.uuid.toLowerCase(), employee);
      }
    }
    return wanted.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }

  /**
   * The active pay schedules, and the one every employee is on when the company pays on a single
   * schedule (its `pay_schedule_type`). Otherwise who is on which schedule is Gusto's pay schedule
   * assignments, which this adapter does not read: members left empty.
   */
  async schedules(): Promise<{ schedules: GustoPaySchedule[]; singleSchedule: string | null }> {
    const [company, all] = await Promise.all([this.company(), this.list<GustoPaySchedule>(this.companyPath('/pay_schedules'))]);
    const schedules = all.filter((s) => s.active !== false);
    return { schedules, singleSchedule: company.pay_schedule_type === 'single' && schedules.length === 1 ? schedules[0].uuid : null };
  }

  async payGroups(): Promise<PayGroupRecord[]> {
    const { schedules, singleSchedule } = await this.schedules();
    const members = singleSchedule ? (await this.list<GustoEmployee>(this.companyPath('/employees'))).filter((e) => e.terminated !== true).map((e) => e.uuid) : [];
    return schedules.map((s) => payGroupRecordOf(s, s.uuid === singleSchedule ? members : []));
  }

  /**
   * Processed regular and off-cycle payrolls whose check date is within [start, end], oldest
   * first. Gusto takes windows of at most a year ending at most 3 months ahead (the list
   * operation's notes), so a longer range is read window by window; each window is widened by a
   * day on both sides and filtered here, whatever Gusto's bounds mean ("after the start date").
   */
  async processedPayrolls(start: string, end: string, today: string): Promise<GustoPayroll[]> {
    const last = minText(end, addDays(addMonths(today, 3), -1));
    const found = new Map<string, GustoPayroll>();
    for (let from = start; from <= last; ) {
      // Widened by a day each side, the window still spans less than a year.
      const to = minText(addDays(addYears(from, 1), -3), last);
      const listed = await this.list<GustoPayroll>(this.companyPath('/payrolls'), {
        processing_statuses: 'processed',
        payroll_types: 'regular,off_cycle',
        date_filter_by: 'check_date',
        start_date: addDays(from, -1),
        end_date: addDays(to, 1),
        sort_order: 'asc',
      });
      for (const payroll of listed) {
        if (payroll.processed === false || !payroll.check_date || payroll.check_date < from || payroll.check_date > to) continue;
        found.set(payrollIdOf(payroll), payroll);
      }
      from = addDays(to, 1);
    }
    return [...found.values()].sort((a, b) => compareText(a.check_date!, b.check_date!) || compareText(payrollIdOf(a), payrollIdOf(b)));
  }

  /** One payroll with all its employee compensations (Gusto pages them, 100 at most a page); undefined if unknown. */
  async payroll(uuid: string, include: string[]): Promise<GustoPayroll | undefined> {
    let payroll: GustoPayroll | undefined;
    const compensations = new Map<string, NonNullable<GustoPayroll['employee_compensations']>[number]>();
    for (let page = 1; page <= 1000; page++) {
      let answer: GustoResponse<GustoPayroll>;
      try {
        answer = await this.get<GustoPayroll>(this.companyPath(`/payrolls/${encodeURIComponent(uuid)}`), { include: include.join(','), page, per: PER });
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
      payroll ??= answer.body;
      const items = answer.body.employee_compensations ?? [];
      // Keyed by employee: a server that ignores `page` repeats itself instead of adding people twice.
      for (const item of items) compensations.set(item.employee_uuid ?? `#${compensations.size}`, item);
      if (isLastPage(answer, page, items.length)) break;
    }
    return payroll && { ...payroll, employee_compensations: [...compensations.values()] };
  }

  /** The company's benefits, of one Gusto type if given (GET …/company_benefits; not paged). */
  async companyBenefits(benefitType?: number): Promise<GustoCompanyBenefit[]> {
    const query = benefitType === undefined ? undefined : { benefit_type: String(benefitType) };
    return (await this.get<GustoCompanyBenefit[]>(this.companyPath('/company_benefits'), query)).body ?? [];
  }

  async companyBenefit(uuid: string): Promise<GustoCompanyBenefit | undefined> {
    try {
      return (await this.get<GustoCompanyBenefit>(`/v1/company_benefits/${encodeURIComponent(uuid)}`)).body;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * Every employee benefit of a company benefit, every window (`include=all_benefits`: past and
   * future ones too, or a retried call could not see a future window it created), in one paged
   * listing: GET /v1/company_benefits/{company_benefit_id}/employee_benefits.
   */
  employeeBenefitsOf(companyBenefitUuid: string): Promise<GustoEmployeeBenefit[]> {
    return this.list<GustoEmployeeBenefit>(`/v1/company_benefits/${encodeURIComponent(companyBenefitUuid)}/employee_benefits`, { include: 'all_benefits' });
  }

  /** One employee's windows of one company benefit, read again after a conflict. */
  async employeeBenefitsOfEmployee(employeeUuid: string, companyBenefitUuid: string): Promise<GustoEmployeeBenefit[]> {
    try {
      const all = await this.list<GustoEmployeeBenefit>(`/v1/employees/${encodeURIComponent(employeeUuid)}/employee_benefits`, { include: 'all_benefits' });
      return all.filter((b) => b.company_benefit_uuid === companyBenefitUuid);
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
  }
}

// -----------------------------------------------------------------------------------------------
// Planning one individual's writes (pure)

/**
 * Enroll from D on with `desired`, open-ended, replacing whatever applied from D on:
 *   1. windows starting after D are superseded: deleted (nothing of them applied before D);
 *   2. a window covering D from before is closed on D - 1, unless it already is the desired
 *      configuration, then it simply continues (no split, no write when it is open-ended);
 *   3. a window starting on D is updated to the desired configuration, else one is created.
 * The order keeps windows from overlapping at every step, as Gusto requires.
 */
function nextEnrollStep(windows: GustoEmployeeBenefit[], date: string, desired: GustoEmployeeBenefitCreateBody): Step | undefined {
  const sorted = [...windows].sort((a, b) => compareText(startOf(a), startOf(b)));
  const later = sorted.find((w) => startOf(w) > date);
  if (later) return { kind: 'delete', window: later };
  const wanted = keyOf(desired);
  const at = sorted.find((w) => startOf(w) === date);
  for (const w of sorted.filter((w) => startOf(w) < date && (endOf(w) === null || endOf(w)! >= date))) {
    if (!at && w.active !== false && keyOf(w) === wanted) {
      return endOf(w) === null ? undefined : { kind: 'update', window: w, body: { version: w.version ?? '', expiration_date: null } };
    }
    return { kind: 'update', window: w, body: { version: w.version ?? '', expiration_date: addDays(date, -1) } };
  }
  if (!at) return { kind: 'create', body: desired };
  if (at.active !== false && endOf(at) === null && keyOf(at) === wanted) return undefined;
  const { company_benefit_uuid: _target, ...fields } = desired;
  return { kind: 'update', window: at, body: { version: at.version ?? '', ...fields } };
}

/** End from D on: windows starting on or after D are deleted (none of them applied before D), the one covering D expires on D - 1. */
function nextEndStep(windows: GustoEmployeeBenefit[], date: string): Step | undefined {
  const sorted = [...windows].sort((a, b) => compareText(startOf(a), startOf(b)));
  const from = sorted.find((w) => startOf(w) >= date);
  if (from) return { kind: 'delete', window: from };
  const covering = sorted.find((w) => endOf(w) === null || endOf(w)! >= date);
  return covering ? { kind: 'update', window: covering, body: { version: covering.version ?? '', expiration_date: addDays(date, -1) } } : undefined;
}

/** Something to end from D on: an active window still in force on D - 1 or later (one ending on D - 1 is a retried end: done). */
function hasEnrollmentToEnd(windows: GustoEmployeeBenefit[], date: string): boolean {
  const dayBefore = addDays(date, -1);
  return windows.some((w) => w.active !== false && (endOf(w) === null || endOf(w)! >= dayBefore));
}

/** What an employee benefit configures, read back the way the mapping reads Gusto's answers: equal keys, nothing to write. */
function keyOf(benefit: GustoEmployeeBenefitRead): string {
  const match = matchOf(benefit);
  const tiers = match ? [...match.tiers].sort((a, b) => a.threshold - b.threshold || a.match - b.match) : null;
  return JSON.stringify({ configuration: enrollmentConfigurationOf(benefit), tiers });
}

/** The day the enrollment of `current` stops, following windows that continue it without a gap; null if none ends it. */
function endOfChain(sorted: GustoEmployeeBenefit[], current: GustoEmployeeBenefit): string | null {
  let window = current;
  for (;;) {
    const end = endOf(window);
    if (end === null) return null;
    const next = sorted.find((w) => startOf(w) === addDays(end, 1));
    if (!next) return addDays(end, 1);
    window = next;
  }
}

/** Gusto's default effective date is the epoch (its document and guide): a window without one started then. */
function startOf(window: GustoEmployeeBenefitRead): string {
  return window.effective_date ?? '1970-01-01';
}

function endOf(window: GustoEmployeeBenefitRead): string | null {
  return window.expiration_date ?? null;
}

function byEmployee(benefits: GustoEmployeeBenefit[]): Map<string, GustoEmployeeBenefit[]> {
  const grouped = new Map<string, GustoEmployeeBenefit[]>();
  for (const benefit of benefits) {
    if (!benefit.employee_uuid) continue;
    const key = benefit.employee_uuid.toLowerCase();
    grouped.set(key, [...(grouped.get(key) ?? []), benefit]);
  }
  return grouped;
}

// -----------------------------------------------------------------------------------------------
// Small helpers

/**
 * The mapping's records as the port's. The public contract admits null in the fields Gusto may
 * not fill (legal name, EIN, gender, dob, address parts, title, income…); the domain types do not
 * yet, and widening them breaks the sandbox code built on its own complete records. The nulls pass
 * through syncs and reads as they are, which is what the contract shows.
 */
const asCompany = (record: CompanyFromGusto) => record as CompanyRecord;
const asIndividual = (record: IndividualFromGusto) => record as IndividualRecord;
const asEmployment = (record: EmploymentFromGusto) => record as EmploymentRecord;
const asPayStatement = (record: PayStatementFromGusto) => record as PayStatementRecord;

function payGroupsOf(employee: GustoEmployee, singleSchedule: string | null): string[] {
  return singleSchedule && employee.terminated !== true ? [singleSchedule] : [];
}

function matchSettingOf(link: BenefitLink): ProviderBenefit['company_contribution'] | undefined {
  const settings = link.settings as LinkSettings;
  return 'company_contribution' in settings ? (settings.company_contribution ?? null) : undefined;
}

function payrollIdOf(payroll: GustoPayroll): string {
  const id = payroll.payroll_uuid ?? payroll.uuid;
  if (!id) throw new GustoApiError('provider_error', 'Gusto answered a payroll without a uuid', { attempts: 1 });
  return id;
}

function unmappable(benefit: GustoCompanyBenefit): never {
  throw new DomainError('server_error', `Gusto company benefit ${benefit.uuid} has benefit type ${benefit.benefit_type}, which has no unified type`);
}

const unknownEmployee = (id: string): ProviderIndividualResult => ({ individual_id: id, code: 404, message: `Gusto has no employee ${id} in this company` });
const notEnrolled = (id: string): ProviderIndividualResult => ({ individual_id: id, code: 404, message: `Individual ${id} has no enrollment in this benefit` });

function stillConflicting(what: string, attempts: number, cause: unknown): GustoApiError {
  // Transient: someone keeps changing it in Gusto; the job worker tries the whole call later.
  return new GustoApiError('provider_error', `Gusto kept answering 409 for ${what}: its version moved ${attempts} times while we wrote it`, {
    status: 409,
    attempts,
    serviceCode: 'provider_conflict',
    cause,
  });
}

function isNotFound(error: unknown): error is GustoApiError {
  return error instanceof GustoApiError && error.status === 404;
}

function isTransient(error: DomainError): boolean {
  return error.family === 'provider_error' || error.family === 'provider_timeout';
}

/** Gusto's own words for a refusal: each error's message after the attribute it names. */
function gustoMessage(error: GustoApiError): string {
  const flatten = (errors: GustoEntityError[], parent?: string): string[] =>
    errors.flatMap((e) => {
      const key = e.error_key === 'base' ? parent : parent ? `${parent}.${e.error_key}` : e.error_key;
      if (e.errors && e.errors.length > 0) return flatten(e.errors, key);
      const message = e.message ?? e.category;
      return [key ? `${key}: ${message}` : message];
    });
  const messages = flatten(error.errors);
  return messages.length > 0 ? `Gusto refused the change: ${messages.join('; ')}` : error.message;
}

/** Runs `work` over `items` with at most `limit` at once, in order; after a failure starts nothing new, lets the running finish, then throws the first. */
async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  // Running work is awaited before throwing: a 401 makes GustoAccess run the whole call again.
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}

function isLastPage(answer: GustoResponse<unknown>, page: number, received: number): boolean {
  const totalPages = headerInt(answer.headers, 'x-total-pages');
  if (totalPages !== undefined) return page >= totalPages;
  // Without paging headers, Gusto answered everything at once or a short page ended the listing.
  return received < PER || received > PER;
}

function headerInt(headers: Record<string, string>, name: string): number | undefined {
  const value = headers[name]?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

function forwardBodyOf(method: string, data: unknown): unknown {
  if (method === 'GET' || method === 'DELETE' || data === undefined || data === null) return undefined;
  if (typeof data !== 'string') return data;
  try {
    // The public contract sends a body as text or JSON; Gusto takes JSON.
    return JSON.parse(data);
  } catch {
    return data;
  }
}

function forwardQueryOf(params: Record<string, unknown> | undefined): GustoQuery | undefined {
  if (!params) return undefined;
  const query: GustoQuery = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    // Gusto's arrays in a query are comma-separated (`include=benefits,taxes`).
    query[name] = Array.isArray(value) ? value.map(String).join(',') : typeof value === 'object' ? JSON.stringify(value) : (value as string | number | boolean);
  }
  return query;
}

function forwardHeadersOf(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function minText(a: string, b: string): string {
  return a < b ? a : b;
}

function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

function addMonths(date: string, months: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCMonth(at.getUTCMonth() + months);
  return at.toISOString().slice(0, 10);
}

function addYears(date: string, years: number): string {
  return addMonths(date, 12 * years);
}
