import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Benefit } from '../../domain/benefits/benefit';
import { benefitGroupOf, unsupportedFeatures } from '../../domain/benefits/enrollment-configuration';
import { Connection } from '../../domain/connections/connection';
import { escalationProblems, parsePolicyConfiguration, PolicyConfiguration, PolicyEscalation } from '../../domain/policies/auto-enrollment-policy';
import { benefitSupportOf } from '../../domain/providers/provider';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { Clock, CLOCK } from '../../domain/shared/clock';
import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { BenefitsRepository } from '../benefits/benefits.repository';
import { OpsAuditWriter } from '../ops-audit/ops-audit.writer';
import { PoliciesRepository, PolicyChange, PolicyFilter, StoredPolicy } from './policies.repository';

export interface NewPolicyInput {
  connectionId: string;
  entityId: string;
  benefitId: string;
  /** As sent: checked against the benefit's type here. */
  configuration: unknown;
  waitingPeriodDays: number;
  escalation: PolicyEscalation | null;
}

/** Absent (undefined) fields stay as they are; `escalation: null` removes it. */
export interface PolicyUpdateInput {
  configuration?: unknown;
  waitingPeriodDays?: number;
  escalation?: PolicyEscalation | null;
  active?: boolean;
}

const TARGET_TYPE = 'policy';

/**
 * Auto-enrollment policies, managed by ops. A policy is checked like an enroll request would
 * be (the configuration's shape for the benefit's type, then what the provider supports), so a
 * new hire's enrollment cannot fail on its configuration later. Every write is audited in its
 * own transaction.
 */
@Injectable()
export class PoliciesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly policies: PoliciesRepository,
    private readonly connections: ConnectionsRepository,
    private readonly benefits: BenefitsRepository,
    private readonly catalogue: ProviderCatalogue,
    private readonly audit: OpsAuditWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(input: NewPolicyInput, actor: string): Promise<StoredPolicy> {
    const connection = await this.connections.find(input.connectionId);
    if (!connection) throw notFound(`No connection ${input.connectionId}`, 'connection_not_found');
    const entity = connection.entities.find((e) => e.id === input.entityId.toLowerCase());
    if (!entity) throw notFound(`No entity ${input.entityId} in connection ${connection.id}`, 'entity_not_found');
    const benefit = await this.benefits.findOfEntity(entity.id, input.benefitId);
    if (!benefit) throw notFound(`No benefit ${input.benefitId} in entity ${entity.id}`, 'benefit_not_found');
    const configuration = this.check(connection, benefit, input.configuration, input.escalation);

    const id = randomUUID();
    const now = this.clock.now();
    return this.dataSource.transaction(async (manager) => {
      const created = await this.policies.insert(
        {
          id,
          connectionId: connection.id,
          entityId: entity.id,
          benefitId: benefit.id,
          configuration,
          waitingPeriodDays: input.waitingPeriodDays,
          escalation: input.escalation,
          active: true,
          createdBy: actor,
          createdAt: now,
        },
        manager,
      );
      if (!created) {
        const existing = await this.policies.findOfBenefit(entity.id, benefit.id, manager);
        throw new DomainError(
          'conflict_error',
          `Entity ${entity.id} already has a policy for benefit ${benefit.id}` +
            (existing ? ` (${existing.id}); change it with POST /ops/api/policies/${existing.id}` : ''),
          { serviceCode: 'policy_already_exists', details: existing ? { context: { policy_id: existing.id } } : undefined },
        );
      }
      const policy = (await this.policies.find(id, manager))!;
      await this.audit.record(manager, {
        actor,
        action: 'policy.create',
        targetType: TARGET_TYPE,
        targetId: id,
        detail: { policy: snapshotOf(policy) },
      });
      return policy;
    });
  }

  list(filter: PolicyFilter, page: { limit: number; offset: number }) {
    return this.policies.list(filter, page);
  }

  async get(id: string): Promise<StoredPolicy> {
    const policy = await this.policies.find(id);
    if (!policy) throw policyNotFound(id);
    return policy;
  }

  /** Changes what is given; the result is checked whole (a new configuration against the kept escalation too). */
  async update(id: string, input: PolicyUpdateInput, actor: string): Promise<StoredPolicy> {
    const given = Object.entries(input).filter(([, value]) => value !== undefined);
    if (given.length === 0) {
      throw invalidRequest('Invalid request: give at least one of configuration, waiting_period_days, escalation, active');
    }
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lockOrExplain(id, manager);
      let configuration = current.configuration;
      const escalation = input.escalation === undefined ? current.escalation : input.escalation;
      if (input.configuration !== undefined || input.escalation !== undefined) {
        const [connection, benefit] = await Promise.all([
          this.connections.find(current.connectionId, manager),
          this.benefits.findOfEntity(current.entityId, current.benefitId, manager),
        ]);
        // Foreign keys keep both; their absence would be a broken database, not a bad request.
        if (!connection || !benefit) throw new Error(`policy ${id} lost its connection or benefit`);
        configuration = this.check(connection, benefit, input.configuration ?? current.configuration, escalation, {
          configurationGiven: input.configuration !== undefined,
        });
      }
      const change: PolicyChange = {
        configuration,
        waitingPeriodDays: input.waitingPeriodDays ?? current.waitingPeriodDays,
        escalation,
        active: input.active ?? current.active,
      };
      return this.apply(current, change, 'policy.update', actor, manager);
    });
  }

  /** Deactivates: new hires are no longer enrolled by it. The policy stays, to be read or reactivated. */
  async deactivate(id: string, actor: string): Promise<StoredPolicy> {
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lockOrExplain(id, manager);
      return this.apply(current, { ...current, active: false }, 'policy.deactivate', actor, manager);
    });
  }

  private async apply(current: StoredPolicy, change: PolicyChange, action: string, actor: string, manager: EntityManager): Promise<StoredPolicy> {
    await this.policies.update(current.id, change, this.clock.now(), manager);
    await this.audit.record(manager, { actor, action, targetType: TARGET_TYPE, targetId: current.id, detail: { changes: changesOf(current, change) } });
    return (await this.policies.find(current.id, manager))!;
  }

  private async lockOrExplain(id: string, manager: EntityManager): Promise<StoredPolicy> {
    const policy = await this.policies.find(id, manager, { lock: true });
    if (!policy) throw policyNotFound(id);
    return policy;
  }

  /**
   * The normalized configuration, or why not: its shape for the benefit's type and the
   * escalation (400), then the provider's support (422), as for an enroll request. A kept
   * configuration (`configurationGiven: false`) is already normalized: only the escalation and
   * the provider's support are checked against it.
   */
  private check(
    connection: Connection,
    benefit: Benefit,
    rawConfiguration: unknown,
    escalation: PolicyEscalation | null,
    { configurationGiven = true } = {},
  ): PolicyConfiguration {
    let configuration: PolicyConfiguration;
    if (configurationGiven) {
      const parsed = parsePolicyConfiguration(rawConfiguration, benefitGroupOf(benefit.type));
      const problems = parsed.ok ? [] : parsed.problems;
      if (parsed.ok && escalation !== null) problems.push(...escalationProblems(escalation, parsed.configuration));
      if (!parsed.ok || problems.length > 0) throw invalidRequest(`Invalid request: ${problems.join('; ')}`);
      configuration = parsed.configuration;
    } else {
      configuration = rawConfiguration as PolicyConfiguration;
      const problems = escalation === null ? [] : escalationProblems(escalation, configuration);
      if (problems.length > 0) throw invalidRequest(`Invalid request: ${problems.join('; ')}`);
    }

    const provider = this.catalogue.find(connection.providerId);
    const providerName = provider?.display_name ?? connection.providerId;
    const viaMethod = provider?.authentication_methods.some((m) => m.type === connection.authenticationType) ?? false;
    const support = provider ? benefitSupportOf(provider, benefit.type, viaMethod ? connection.authenticationType : undefined) : null;
    const unsupported = new Set(unsupportedFeatures(configuration, support, benefit.type, providerName));
    const operations = support?.supported_operations.individual_benefits;
    if (operations?.create === 'not_supported_by_provider') {
      unsupported.add(`${providerName} does not support enrolling individuals in ${benefit.type} benefits`);
    }
    if (escalation !== null && operations?.update === 'not_supported_by_provider') {
      unsupported.add(`${providerName} does not support changing enrollments in ${benefit.type} benefits, which escalation needs`);
    }
    if (unsupported.size > 0) {
      throw new DomainError('unprocessable_request_error', `Unsupported by the provider: ${[...unsupported].join('; ')}`, {
        serviceCode: 'unprocessable_parameters',
      });
    }
    return configuration;
  }
}

const policyNotFound = (id: string) => notFound(`No policy ${id.slice(0, 100)}`, 'policy_not_found');

/** What the audit keeps of a policy: its settings in their stored form. */
function snapshotOf(policy: StoredPolicy): Record<string, unknown> {
  return {
    connection_id: policy.connectionId,
    entity_id: policy.entityId,
    benefit_id: policy.benefitId,
    configuration: policy.configuration,
    waiting_period_days: policy.waitingPeriodDays,
    escalation: policy.escalation,
    active: policy.active,
  };
}

/** `{ field: { from, to } }` for each field the change alters (empty when it alters nothing). */
function changesOf(current: StoredPolicy, change: PolicyChange): Record<string, { from: unknown; to: unknown }> {
  const before = snapshotOf(current);
  const after: Record<string, unknown> = {
    configuration: change.configuration,
    waiting_period_days: change.waitingPeriodDays,
    escalation: change.escalation,
    active: change.active,
  };
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(after)) {
    if (canonical(before[field]) !== canonical(to)) changes[field] = { from: before[field], to };
  }
  return changes;
}

/** JSON with keys sorted: jsonb hands keys back in its own order, which must not count as a change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
