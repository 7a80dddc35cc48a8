import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Benefit } from '../../domain/benefits/benefit';
import { utcDateOf } from '../../domain/benefits/effective-date';
import { ENROLLMENT_LEDGER_REPOSITORY, EnrollmentLedgerRepository } from '../../domain/enrollments/enrollment-ledger.repository';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, notFound } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { UnitOfWork } from '../../infrastructure/database/unit-of-work';
import { BenefitScope, BenefitsLookup } from '../benefits/benefits-lookup.service';
import { EnrollIndividualsCommand, EnrollmentCommandResult, UnenrollIndividualsCommand } from '../enrollments/commands/enrollment-commands';
import { OpsAuditWriter } from '../ops-audit/ops-audit.writer';
import { reapplyPlan } from './discrepancy-reapply';
import { DiscrepancyResult, LIVE_STATUSES, OpsDiscrepancy } from './dto/discrepancy.dto';
import { OpsDiscrepanciesRepository, OpsDiscrepancyFilter } from './ops-discrepancies.repository';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const conflict = (message: string, serviceCode: string) => new DomainError('conflict_error', message, { serviceCode });
const discrepancyNotFound = (id: string) => notFound(`No discrepancy ${id}`, 'discrepancy_not_found');
const resolved = (d: OpsDiscrepancy, what: string) =>
  conflict(`Discrepancy ${d.id} is resolved (${d.resolution ?? 'no reason recorded'}); a resolved discrepancy cannot be ${what}`, 'discrepancy_resolved');

export interface DiscrepancyWithResults {
  discrepancy: OpsDiscrepancy;
  results: DiscrepancyResult[];
}

/**
 * Deduction discrepancies for the ops team: every connection's, with the statements that fed
 * them. Ops acknowledge one (with a note), or re-apply the service's configuration to the
 * provider through an ordinary enrollment job; reconciliation resolves it when a later statement
 * or read agrees. Each action is audited in the transaction that carries it out.
 */
@Injectable()
export class OpsDiscrepanciesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly discrepancies: OpsDiscrepanciesRepository,
    private readonly connections: ConnectionsRepository,
    private readonly benefits: BenefitsLookup,
    @Inject(ENROLLMENT_LEDGER_REPOSITORY) private readonly ledgers: EnrollmentLedgerRepository,
    private readonly commands: CommandBus,
    private readonly audit: OpsAuditWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  list(filter: Omit<OpsDiscrepancyFilter, 'statuses'> & { statuses?: readonly OpsDiscrepancy['status'][] }, page: { limit: number; offset: number }) {
    const distinct = <T>(values: readonly T[] | undefined) => (values === undefined ? undefined : [...new Set(values)]);
    return this.discrepancies.list({ ...filter, kinds: distinct(filter.kinds), statuses: distinct(filter.statuses) ?? LIVE_STATUSES }, page);
  }

  async get(id: string): Promise<DiscrepancyWithResults> {
    const discrepancy = await this.discrepancies.find(id);
    if (!discrepancy) throw discrepancyNotFound(id);
    return { discrepancy, results: await this.discrepancies.recentResults(id) };
  }

  /** open → acknowledged (who, when, the note); acknowledged again → the note replaced; resolved → 409. */
  async acknowledge(id: string, note: string, actor: string): Promise<DiscrepancyWithResults> {
    await this.uow.transaction(async (manager) => {
      const current = await this.discrepancies.find(id, manager, { lock: true });
      if (!current) throw discrepancyNotFound(id);
      if (current.status === 'resolved') throw resolved(current, 'acknowledged');
      await this.discrepancies.acknowledge(id, { by: actor, at: this.clock.now(), note }, manager);
      await this.audit.record(manager, {
        actor,
        action: 'discrepancy.acknowledge',
        targetType: 'discrepancy',
        targetId: id,
        detail: {
          note,
          previous_status: current.status,
          ...(current.status === 'acknowledged' && { previous_note: current.note }),
          kind: current.kind,
          benefit_id: current.benefitId,
          individual_id: current.individualId,
        },
      });
    });
    return this.get(id);
  }

  /**
   * Re-applies the service's configuration to the provider: the enrollment the service applied
   * that is in force today is enrolled again from today, or, with none in force, the individual
   * is unenrolled from today. The job goes through the enrollment lifecycle like a client's
   * request (the REST routes' commands), in the transaction that records it on the discrepancy
   * and audits it. The discrepancy stays live until a later statement or read agrees.
   */
  async reapply(id: string, actor: string): Promise<{ result: DiscrepancyWithResults; jobId: string }> {
    const found = await this.discrepancies.find(id);
    if (!found) throw discrepancyNotFound(id);
    if (found.status === 'resolved') throw resolved(found, 're-applied');
    const scope = await this.scopeOf(found);
    const benefit = await this.benefitOf(scope, found);

    const jobId = await this.uow.transaction(async (manager) => {
      // Locked, and looked at again: reconciliation may have resolved it meanwhile.
      const current = await this.discrepancies.find(id, manager, { lock: true });
      if (!current) throw discrepancyNotFound(id);
      if (current.status === 'resolved') throw resolved(current, 're-applied');
      const today = utcDateOf(this.clock.now());
      const individualId = current.individualId.toLowerCase();
      const [enrollment] = await this.ledgers.individualsOf(benefit.id, [individualId]);
      const plan = reapplyPlan(enrollment?.applied ?? [], benefit.type, today);
      const command =
        plan.operation === 'enroll'
          ? new EnrollIndividualsCommand(scope, benefit.id, [{ individual_id: individualId, configuration: plan.configuration }])
          : new UnenrollIndividualsCommand(scope, benefit.id, [individualId], plan.effectiveDate);
      const outcome: EnrollmentCommandResult = await this.commands.execute(command);
      // Never stale without an occurred_at, so a job is always opened; refuse rather than record none.
      if (!outcome.jobId) throw conflict(`Nothing was opened to re-apply discrepancy ${id}`, 'nothing_to_reapply');
      await this.discrepancies.recordReapply(id, outcome.jobId, this.clock.now(), manager);
      await this.audit.record(manager, {
        actor,
        action: 'discrepancy.reapply',
        targetType: 'discrepancy',
        targetId: id,
        detail: {
          operation: plan.operation,
          job_id: outcome.jobId,
          effective_date: plan.effectiveDate,
          ...(plan.operation === 'enroll' && { configuration: plan.configuration }),
          kind: current.kind,
          status: current.status,
          benefit_id: benefit.id,
          individual_id: individualId,
          previous_reapply_job_id: current.reapplyJobId,
        },
      });
      return outcome.jobId;
    });
    return { result: await this.get(id), jobId };
  }

  /** The connection and entity the discrepancy belongs to, if work can still be sent there (409 if not). */
  private async scopeOf(d: OpsDiscrepancy): Promise<BenefitScope> {
    const cannot = (why: string, serviceCode: string) => conflict(`Discrepancy ${d.id} cannot be re-applied: ${why}`, serviceCode);
    const connection = await this.connections.find(d.connectionId);
    if (!connection || connection.status === 'disconnected') {
      throw cannot(`its connection ${d.connectionId} is disconnected`, 'connection_disconnected');
    }
    if (connection.status === 'reauth') {
      throw cannot(`its connection ${d.connectionId} needs the employer to reauthenticate first`, 'connection_needs_reauth');
    }
    const entity = connection.entities.find((e) => e.id === d.entityId);
    if (!entity || entity.status !== 'active') throw cannot(`its entity ${d.entityId} is disconnected`, 'entity_disconnected');
    // Enrollments name individuals by UUID; a provider's other ids cannot be enrolled.
    if (!UUID.test(d.individualId)) throw cannot(`individual ${d.individualId.slice(0, 100)} is not an id that can be enrolled`, 'individual_not_enrollable');
    return { connection, entity };
  }

  /** The benefit as the enrollment commands will find it; gone (unknown, or its creation failed) is a 409 here. */
  private async benefitOf(scope: BenefitScope, d: OpsDiscrepancy): Promise<Benefit> {
    try {
      return await this.benefits.require(scope, d.benefitId);
    } catch (error) {
      if (error instanceof DomainError && error.serviceCode === 'benefit_not_found') {
        throw conflict(`Discrepancy ${d.id} cannot be re-applied: its benefit ${d.benefitId} is gone from the entity`, 'benefit_gone');
      }
      throw error;
    }
  }
}
