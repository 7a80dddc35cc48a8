import { Inject, Injectable } from '@nestjs/common';
import { Benefit } from '../../../domain/benefits/benefit';
import { latestEffectiveDate, resolveEffectiveDate, utcDateOf } from '../../../domain/benefits/effective-date';
import { benefitGroupOf, parseConfiguration, unsupportedFeatures } from '../../../domain/benefits/enrollment-configuration';
import { Connection } from '../../../domain/connections/connection';
import { repeatedKeys } from '../../../domain/enrollments/enrollment-change';
import { RequestItem } from '../../../domain/enrollments/enrollment-ledger';
import { BenefitFeaturesAndOperations, benefitSupportOf, BenefitType } from '../../../domain/providers/provider';
import { ProviderCatalogue } from '../../../domain/providers/provider-catalogue';
import { Clock, CLOCK } from '../../../domain/shared/clock';
import { DomainError, invalidRequest } from '../../../domain/shared/domain-error';
import { BenefitScope } from '../../benefits/benefits-lookup.service';
import { OpenEnrollment } from '../enrollment-lifecycle';
import { EnrollmentCommandContext, EnrollmentElement } from './enrollment-commands';

/** Messages beyond this many are summarised, so a 10,000-element body cannot produce a huge error. */
const MAX_LISTED_PROBLEMS = 20;

/**
 * What an enroll or unenroll request must pass before it reaches the lifecycle, whoever sends it
 * (REST or an HRIS saga): the configurations by the benefit's type, the effective dates, each
 * individual once per date, and the provider's support. Nothing is written for a refused one.
 */
@Injectable()
export class EnrollmentRequestRules {
  constructor(
    private readonly catalogue: ProviderCatalogue,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** An enroll request, validated whole (a DomainError names every problem), ready for the lifecycle. */
  enroll(scope: BenefitScope, benefit: Benefit, elements: readonly EnrollmentElement[], context: EnrollmentCommandContext): OpenEnrollment {
    const today = utcDateOf(this.clock.now());
    const latest = context.scheduledByPolicy ? undefined : latestEffectiveDate(today);
    const group = benefitGroupOf(benefit.type);
    const problems: string[] = [];
    const items: RequestItem[] = [];
    elements.forEach((element, index) => {
      const parsed = parseConfiguration(element.configuration, group, `[${index}].configuration`);
      if (!parsed.ok) return void problems.push(...parsed.problems);
      const date = resolveEffectiveDate(parsed.effectiveDate, today, latest);
      if (!date.ok) return void problems.push(`[${index}].configuration.${date.problem}`);
      items.push({ individualId: element.individual_id.toLowerCase(), effectiveDate: date.date, configuration: parsed.configuration });
    });
    if (problems.length > 0) throw invalidRequest(`Invalid request: ${listed(problems)}`);
    refuseRepeated(items);

    const { support, providerName } = this.supportOf(scope.connection, benefit.type);
    const unsupported = new Set<string>();
    if (support?.supported_operations.individual_benefits.create === 'not_supported_by_provider') {
      unsupported.add(`${providerName} does not support enrolling individuals in ${benefit.type} benefits`);
    }
    for (const item of items) for (const p of unsupportedFeatures(item.configuration!, support, benefit.type, providerName)) unsupported.add(p);
    if (unsupported.size > 0) throw unprocessable([...unsupported]);
    return { scope, benefit, request: { operation: 'enroll', items, occurredAt: context.occurredAt ?? null, sagaId: context.sagaId } };
  }

  /** An unenroll request from a date (absent or past: today), validated, ready for the lifecycle. */
  unenroll(scope: BenefitScope, benefit: Benefit, individualIds: readonly string[], effectiveDate: string | undefined, context: EnrollmentCommandContext): OpenEnrollment {
    const { support, providerName } = this.supportOf(scope.connection, benefit.type);
    if (support === null) throw unprocessable([`${providerName} does not support ${benefit.type} benefits`]);
    if (support.supported_operations.individual_benefits.delete === 'not_supported_by_provider') {
      throw unprocessable([`${providerName} does not support unenrolling individuals from ${benefit.type} benefits`]);
    }
    const today = utcDateOf(this.clock.now());
    const date = resolveEffectiveDate(effectiveDate, today, latestEffectiveDate(today));
    if (!date.ok) throw invalidRequest(`Invalid request: ${date.problem}`);
    const items = individualIds.map((id) => ({ individualId: id.toLowerCase(), effectiveDate: date.date, configuration: null }));
    refuseRepeated(items);
    return { scope, benefit, request: { operation: 'unenroll', items, occurredAt: context.occurredAt ?? null, sagaId: context.sagaId } };
  }

  /** The provider's support for the type through the connection's authentication method. */
  supportOf(connection: Connection, type: BenefitType): { support: BenefitFeaturesAndOperations | null; providerName: string } {
    const provider = this.catalogue.find(connection.providerId);
    if (!provider) return { support: null, providerName: connection.providerId };
    const viaMethod = provider.authentication_methods.some((m) => m.type === connection.authenticationType);
    return {
      support: benefitSupportOf(provider, type, viaMethod ? connection.authenticationType : undefined),
      providerName: provider.display_name,
    };
  }
}

/** 400 when an individual is named twice on one date (several dates are fine). */
export function refuseRepeated(items: readonly { individualId: string; effectiveDate: string }[]): void {
  const repeated = repeatedKeys(items.map((i) => `${i.individualId}|${i.effectiveDate}`)).map((key) => {
    const [id, date] = key.split('|');
    return `${id} on ${date}`;
  });
  if (repeated.length > 0) {
    throw invalidRequest(`Invalid request: each individual may appear once per effective date; repeated: ${listed(repeated)}`);
  }
}

export function unprocessable(problems: string[]): DomainError {
  return new DomainError('unprocessable_request_error', `Unsupported by the provider: ${listed(problems)}`, {
    serviceCode: 'unprocessable_parameters',
  });
}

export function listed(problems: string[]): string {
  const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
  return problems.slice(0, MAX_LISTED_PROBLEMS).join('; ') + more;
}
