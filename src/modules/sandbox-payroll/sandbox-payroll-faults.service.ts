import { Inject, Injectable } from '@nestjs/common';
import { calendarDateOf, latestEffectiveDate } from '../../domain/benefits/effective-date';
import { benefitGroupOf, parseConfiguration, unsupportedFeatures } from '../../domain/benefits/enrollment-configuration';
import { Connection } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { benefitSupportOf } from '../../domain/providers/provider';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { EmployerRef } from '../../domain/providers/provider-port';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { SandboxEmployerStore } from '../../infrastructure/providers/sandbox/sandbox-employer.store';
import { SandboxPayAdjustment } from '../../infrastructure/providers/sandbox/sandbox-pay-adjustments';
import { SandboxBenefit, SandboxEnrollment } from '../../infrastructure/providers/sandbox/sandbox-payroll.types';
import { SandboxEnrollmentEditDto, SandboxEnrollmentEndQueryDto, SandboxPayAdjustmentsDto } from './dto/sandbox-payroll-faults.dto';
import { individualNotFound, sandboxRefOf } from './sandbox-payroll.service';

/** Problems listed in one error message at most; the rest are counted. */
const MAX_LISTED_PROBLEMS = 20;

/** The end of an enrollment at the sandbox provider, as `DELETE /sandbox/benefits/{id}/individuals/{id}` answers it. */
export interface SandboxEnrollmentEnd {
  benefit_id: string;
  individual_id: string;
  /** `YYYY-MM-DD` from which the enrollment no longer applies. */
  ended_on: string;
}

/**
 * Ways to make payroll wrong in the sandbox, for the reconciliation to find: a payroll admin's
 * edit of an enrollment in the provider's own screens (the sandbox enrollment changes, the
 * service's records do not), and adjustments of the next regular pay run (skip, change or keep a
 * deduction; sandbox-pay-adjustments.ts). Sandbox connections only, as every sandbox edit.
 */
@Injectable()
export class SandboxPayrollFaultsService {
  constructor(
    private readonly store: SandboxEmployerStore,
    private readonly catalogue: ProviderCatalogue,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Writes the individual's sandbox enrollment in the benefit from the effective date on, with
   * the configuration as the enroll route takes it, normalized as the enrollments service stores
   * it. Nothing of the service's own enrollment records changes.
   */
  async editEnrollment(
    connection: Connection,
    entity: ConnectionEntity,
    benefitId: string,
    individualId: string,
    body: SandboxEnrollmentEditDto,
  ): Promise<SandboxEnrollment> {
    const ref = sandboxRefOf(connection, entity);
    const benefit = await this.requireTarget(ref, benefitId, individualId);
    const parsed = parseConfiguration(body.configuration, benefitGroupOf(benefit.type), 'configuration');
    const problems = parsed.ok ? [] : [...parsed.problems];
    const effectiveDate = this.effectiveDateOf(body.effective_date, parsed.ok ? parsed.effectiveDate : undefined, problems);
    if (!parsed.ok || problems.length > 0) throw problemsError(problems);
    const unsupported = this.unsupported(connection, benefit, parsed.configuration);
    if (unsupported.length > 0) {
      throw new DomainError('unprocessable_request_error', `Unsupported by the provider: ${listed(unsupported)}`, { serviceCode: 'unprocessable_parameters' });
    }
    const enrollment: SandboxEnrollment = {
      benefit_id: benefit.benefit_id,
      individual_id: individualId.toLowerCase(),
      effective_date: effectiveDate,
      configuration: parsed.configuration,
      ended_on: null,
    };
    await this.store.enroll(ref, benefit.benefit_id, [enrollment]);
    return enrollment;
  }

  /** Ends the individual's sandbox enrollment in the benefit from the date on (default today); 404 with none in force or scheduled. */
  async endEnrollment(
    connection: Connection,
    entity: ConnectionEntity,
    benefitId: string,
    individualId: string,
    query: SandboxEnrollmentEndQueryDto,
  ): Promise<SandboxEnrollmentEnd> {
    const ref = sandboxRefOf(connection, entity);
    const benefit = await this.requireTarget(ref, benefitId, individualId);
    const problems: string[] = [];
    const date = this.effectiveDateOf(query.effective_date, undefined, problems);
    throwIfProblems(problems);
    const ended = await this.store.unenroll(ref, benefit.benefit_id, [individualId], date);
    if (ended.length === 0) {
      throw notFound(`Individual ${individualId} has no enrollment in benefit ${benefitId} in force on ${date} or scheduled after it`, 'enrollment_not_found');
    }
    return { benefit_id: benefit.benefit_id, individual_id: individualId.toLowerCase(), ended_on: date };
  }

  async adjustments(connection: Connection, entity: ConnectionEntity): Promise<{ adjustments: SandboxPayAdjustment[] }> {
    return { adjustments: await this.store.payAdjustments(sandboxRefOf(connection, entity)) };
  }

  /**
   * Adds adjustments for the next regular pay run, all or none, replacing pending ones of the
   * same (individual, benefit). `change` takes at least one amount, `skip` and `keep` none; a
   * `keep` needs an enrollment of the pair at the provider (in force, ended or scheduled).
   */
  async addAdjustments(connection: Connection, entity: ConnectionEntity, body: SandboxPayAdjustmentsDto): Promise<{ adjustments: SandboxPayAdjustment[] }> {
    const ref = sandboxRefOf(connection, entity);
    const problems: string[] = [];
    const first = new Map<string, number>();
    const adjustments = body.adjustments.map((given, index): SandboxPayAdjustment => {
      const at = `adjustments[${index}]`;
      const adjustment: SandboxPayAdjustment = {
        individual_id: given.individual_id.toLowerCase(),
        benefit_id: given.benefit_id.toLowerCase(),
        action: given.action,
        employee_amount: given.employee_amount ?? null,
        employer_amount: given.employer_amount ?? null,
      };
      const amounts = adjustment.employee_amount !== null || adjustment.employer_amount !== null;
      if (adjustment.action === 'change' && !amounts) problems.push(`${at}: change needs employee_amount, employer_amount or both`);
      if (adjustment.action !== 'change' && amounts) problems.push(`${at}: ${adjustment.action} takes no amounts (employee_amount and employer_amount are for change)`);
      const key = `${adjustment.individual_id}|${adjustment.benefit_id}`;
      if (first.has(key)) {
        problems.push(`${at}: individual ${adjustment.individual_id} in benefit ${adjustment.benefit_id} is already adjusted by adjustments[${first.get(key)}]`);
      } else {
        first.set(key, index);
      }
      return adjustment;
    });
    throwIfProblems(problems);

    const people = await this.store.existingIds(ref, adjustments.map((a) => a.individual_id));
    const benefits = new Set((await this.store.benefits(ref)).map((b) => b.benefit_id.toLowerCase()));
    adjustments.forEach((a, index) => {
      if (!people.has(a.individual_id)) problems.push(`adjustments[${index}].individual_id: no individual ${a.individual_id} at this employer`);
      if (!benefits.has(a.benefit_id)) problems.push(`adjustments[${index}].benefit_id: no benefit ${a.benefit_id} at the provider`);
    });
    const keeps = adjustments.filter((a) => a.action === 'keep' && people.has(a.individual_id) && benefits.has(a.benefit_id));
    const enrolled = await this.store.everEnrolled(ref, keeps);
    adjustments.forEach((a, index) => {
      if (keeps.includes(a) && !enrolled.has(`${a.benefit_id}|${a.individual_id}`)) {
        problems.push(`adjustments[${index}]: individual ${a.individual_id} has never been enrolled in benefit ${a.benefit_id} at the provider: nothing to keep`);
      }
    });
    throwIfProblems(problems);
    return { adjustments: await this.store.addPayAdjustments(ref, adjustments) };
  }

  async clearAdjustments(connection: Connection, entity: ConnectionEntity): Promise<{ adjustments: SandboxPayAdjustment[]; deleted: number }> {
    const deleted = await this.store.clearPayAdjustments(sandboxRefOf(connection, entity));
    return { adjustments: [], deleted };
  }

  /** The benefit at the sandbox provider, once it and the individual are found (404 otherwise). */
  private async requireTarget(ref: EmployerRef, benefitId: string, individualId: string): Promise<SandboxBenefit> {
    const benefit = await this.store.benefit(ref, benefitId);
    if (!benefit) throw notFound(`No benefit ${benefitId} at the sandbox provider for this entity`, 'benefit_not_found');
    if ((await this.store.existingIds(ref, [individualId])).size === 0) throw individualNotFound(individualId);
    return benefit;
  }

  /**
   * The date given beside the configuration, or the configuration's own `effective_date` (in any
   * format the enroll route takes), or today; at most two years ahead, as the enroll route's.
   * A date in the past is kept: an admin may date a change back.
   */
  private effectiveDateOf(given: string | undefined, inConfiguration: unknown, problems: string[]): string {
    const today = this.clock.now().toISOString().slice(0, 10);
    let nested: string | undefined;
    if (inConfiguration !== undefined && inConfiguration !== null) {
      nested = typeof inConfiguration === 'string' ? calendarDateOf(inConfiguration.trim()) : undefined;
      if (nested === undefined) {
        problems.push(`configuration.effective_date: must be YYYY-MM-DD, MM/DD/YYYY or an ISO 8601 date-time, not ${JSON.stringify(String(inConfiguration).slice(0, 40))}`);
      } else if (given !== undefined && given !== nested) {
        problems.push(`configuration.effective_date: ${nested} differs from effective_date ${given}; give the date once`);
      }
    }
    const date = given ?? nested ?? today;
    const latest = latestEffectiveDate(today);
    if (date > latest) problems.push(`effective_date: must be within two years of today (on or before ${latest}), not ${date}`);
    return date;
  }

  /** What the connection's provider does not support of the configuration, as the enroll route words it. */
  private unsupported(connection: Connection, benefit: SandboxBenefit, configuration: Parameters<typeof unsupportedFeatures>[0]): string[] {
    const provider = this.catalogue.find(connection.providerId);
    if (!provider) return [];
    const viaMethod = provider.authentication_methods.some((m) => m.type === connection.authenticationType);
    const support = benefitSupportOf(provider, benefit.type, viaMethod ? connection.authenticationType : undefined);
    return unsupportedFeatures(configuration, support, benefit.type, provider.display_name);
  }
}

function listed(problems: string[]): string {
  const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
  return problems.slice(0, MAX_LISTED_PROBLEMS).join('; ') + more;
}

const problemsError = (problems: string[]) => invalidRequest(`Invalid request: ${listed(problems)}`);

function throwIfProblems(problems: string[]): void {
  if (problems.length > 0) throw problemsError(problems);
}
