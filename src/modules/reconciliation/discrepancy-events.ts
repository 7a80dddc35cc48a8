import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { BenefitEventType } from '../../domain/benefits/benefit-events';
import { DiscrepancyOpening } from '../../domain/reconciliation/discrepancy-lifecycle';
import { BenefitEventsWriter } from '../../infrastructure/messaging/outbox/benefit-events.writer';

interface Scope {
  connectionId: string;
  entityId: string;
}

/**
 * What reconciliation tells the world, in the transaction that records it: a domain event on
 * `benefits.events` (DeductionDiscrepancyOpened / Resolved, PaymentContributionsReady) and the
 * matching opt-in webhook (deduction.discrepancy.opened / resolved, payment.contributions.ready)
 * to the endpoints that subscribe, signed and delivered like the others. Both carry the same data.
 */
@Injectable()
export class DiscrepancyEvents {
  constructor(private readonly benefitEvents: BenefitEventsWriter) {}

  async opened(manager: EntityManager, scope: Scope, openings: (DiscrepancyOpening & { id: string })[]): Promise<void> {
    await this.publish(
      manager,
      scope,
      'DeductionDiscrepancyOpened',
      'deduction.discrepancy.opened',
      openings.map((o) => ({
        discrepancy_id: o.id,
        kind: o.kind,
        benefit_id: o.benefitId,
        individual_id: o.individualId,
        payment_id: o.paymentId,
        pay_date: o.payDate,
        expected: o.expected,
        observed: o.observed,
      })),
    );
  }

  async resolved(
    manager: EntityManager,
    scope: Scope,
    resolved: { id: string; kind: string; benefit_id: string; individual_id: string; resolution: string; payment_id: string | null }[],
  ): Promise<void> {
    await this.publish(
      manager,
      scope,
      'DeductionDiscrepancyResolved',
      'deduction.discrepancy.resolved',
      resolved.map((r) => ({
        discrepancy_id: r.id,
        kind: r.kind,
        benefit_id: r.benefit_id,
        individual_id: r.individual_id,
        resolution: r.resolution,
        payment_id: r.payment_id,
      })),
    );
  }

  /** A payment whose statements were (re)reconciled: its contributions can be read. */
  async contributionsReady(
    manager: EntityManager,
    scope: Scope,
    payments: { payment_id: string; pay_date: string; statements: number; open_discrepancies: number }[],
  ): Promise<void> {
    await this.publish(
      manager,
      scope,
      'PaymentContributionsReady',
      'payment.contributions.ready',
      payments.map((p) => ({
        payment_id: p.payment_id,
        pay_date: p.pay_date,
        statements: p.statements,
        open_discrepancies: p.open_discrepancies,
        contributions_url: `/reconciliation/payments/${encodeURIComponent(p.payment_id)}/contributions`,
      })),
    );
  }

  private async publish(
    manager: EntityManager,
    scope: Scope,
    eventType: BenefitEventType,
    webhookType: string,
    data: Record<string, unknown>[],
  ): Promise<void> {
    if (data.length === 0) return;
    await this.benefitEvents.record(
      manager,
      data.map((d) => ({ type: eventType, connectionId: scope.connectionId, entityId: scope.entityId, data: d })),
    );
    await manager.query(`SELECT webhook_enqueue($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[])`, [
      data.map(() => scope.connectionId),
      data.map(() => scope.entityId),
      data.map(() => webhookType),
      data.map((d) => JSON.stringify(d)),
    ]);
  }
}
