import { JobStatus } from '../jobs/job';
import { ProviderBenefit } from '../providers/provider-port';
import { BenefitType } from '../providers/provider';
import { Benefit } from './benefit';

/** A benefit the service knows, with the status of the job that created or registered it (null: none). */
export interface KnownBenefit {
  benefit: Benefit;
  creationStatus: JobStatus | null;
}

/** What a benefit read answers: the wire fields, in the domain's names. */
export type BenefitRecord = Pick<Benefit, 'id' | 'type' | 'description' | 'frequency' | 'companyContribution'>;

const OPEN: readonly (JobStatus | null)[] = ['pending', 'in_progress'];

/** Created or registered, and the provider has not (yet) refused it: it exists or will. */
export const isAlive = (known: KnownBenefit): boolean => known.creationStatus !== 'error';

/** Its creation is still on its way to the provider (or to the Assisted provider's staff). */
export const isCreationPending = (known: KnownBenefit): boolean => OPEN.includes(known.creationStatus);

export const recordOfProvider = (benefit: ProviderBenefit): BenefitRecord => ({
  id: benefit.benefit_id,
  type: benefit.type as BenefitType,
  description: benefit.description,
  frequency: benefit.frequency,
  companyContribution: benefit.company_contribution,
});

/**
 * The benefits a list read answers. Automated (`atProvider` given): the provider is the truth,
 * so its benefits, as it describes them, then the service's benefits whose creation is still
 * pending (asked for, not there yet). Assisted (`atProvider` null): the service's own record,
 * less creations the provider's staff failed.
 */
export function visibleBenefits(atProvider: ProviderBenefit[] | null, known: KnownBenefit[]): BenefitRecord[] {
  if (atProvider === null) return known.filter(isAlive).map((k) => k.benefit);
  const there = new Set(atProvider.map((b) => b.benefit_id));
  return [...atProvider.map(recordOfProvider), ...known.filter((k) => !there.has(k.benefit.id) && isCreationPending(k)).map((k) => k.benefit)];
}

/**
 * What a read of one benefit answers, by the same rule as the list: the provider's version where
 * it can be asked and has it (`atProvider` null: it cannot be asked); else the service's own
 * record, while its creation is on its way (or, where the provider cannot be asked, unless it failed).
 */
export function visibleBenefit(atProvider: ProviderBenefit | undefined | null, known: KnownBenefit | undefined): BenefitRecord | undefined {
  if (atProvider) return recordOfProvider(atProvider);
  if (!known) return undefined;
  if (atProvider === null) return isAlive(known) ? known.benefit : undefined;
  return isCreationPending(known) ? known.benefit : undefined;
}

/**
 * Whether enrollment work on a benefit can reach the provider, from its creation job's status
 * (undefined: found at the provider, no creation job): `creating` waits for that job, `failed`
 * never will.
 */
export function creationStateOf(status: JobStatus | undefined): 'ready' | 'creating' | 'failed' {
  if (status === undefined || status === 'complete') return 'ready';
  return OPEN.includes(status) ? 'creating' : 'failed';
}
