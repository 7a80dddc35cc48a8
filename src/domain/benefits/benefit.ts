import { BenefitFrequency, BenefitType } from '../providers/provider';

/** A company match: `match` % (basis points) of pay up to `threshold` % of pay, per tier. */
export interface MatchTier {
  match: number;
  threshold: number;
}

export interface CompanyMatch {
  type: 'match';
  tiers: MatchTier[];
}

export type BenefitOrigin = 'created' | 'registered' | 'provider';

/** A deduction the service knows, in one entity of a connection. */
export interface Benefit {
  id: string;
  connectionId: string;
  entityId: string;
  type: BenefitType;
  description: string;
  frequency: BenefitFrequency | null;
  companyContribution: CompanyMatch | null;
  origin: BenefitOrigin;
  /** The job that made it at the provider; null for a benefit found there. */
  jobId: string | null;
  createdAt: Date;
  updatedAt: Date;
}
