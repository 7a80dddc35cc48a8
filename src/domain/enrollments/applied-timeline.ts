import { EnrollmentConfigurationParams } from '../benefits/benefit-job-params';

/**
 * What the provider holds for one individual in one benefit, by date: each segment applies from
 * its date until the next one; a segment without configuration is an enrollment that ended.
 * Enroll and unenroll are overwrites from their effective date on (the provider replaces
 * anything it held from that date), so a change applied here truncates the later segments.
 */
export interface AppliedSegment {
  /** `YYYY-MM-DD` */
  from: string;
  configuration: EnrollmentConfigurationParams | null;
  /** The job whose change this is (absent on segments written before jobs were recorded). */
  jobId?: string;
}

/**
 * How long a segment is kept after it stopped applying: pay statements are reconciled against
 * the configuration in force on their pay date, and a sync may bring a year of them, or a
 * correction of one paid months ago (src/domain/reconciliation).
 */
export const APPLIED_HISTORY_DAYS = 400;

export type AppliedTimeline = readonly AppliedSegment[];

/**
 * The timeline after the provider applied a change: everything from its date on is replaced.
 * Segments that stopped applying more than APPLIED_HISTORY_DAYS before `today` are dropped.
 */
export function applyToTimeline(
  timeline: AppliedTimeline,
  change: { effectiveDate: string; configuration: EnrollmentConfigurationParams | null; jobId?: string },
  today: string,
): AppliedTimeline {
  const kept = timeline.filter((s) => s.from < change.effectiveDate);
  const segment: AppliedSegment = { from: change.effectiveDate, configuration: change.configuration };
  if (change.jobId !== undefined) segment.jobId = change.jobId;
  return compacted([...kept, segment], today);
}

function compacted(timeline: AppliedSegment[], today: string): AppliedSegment[] {
  const cutoff = daysBefore(today, APPLIED_HISTORY_DAYS);
  // A segment applied until the next one began: it is kept while that was within the history.
  return timeline.filter((s, i) => i === timeline.length - 1 || timeline[i + 1].from > cutoff);
}

function daysBefore(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

/** The segment in force on `date` (an ended enrollment's too), or null before the first. */
export function segmentInForceOn(timeline: AppliedTimeline, date: string): AppliedSegment | null {
  let found: AppliedSegment | null = null;
  for (const segment of timeline) {
    if (segment.from > date) break;
    found = segment;
  }
  return found;
}

/** The configuration in force on `date`, or null. */
export function inForceOn(timeline: AppliedTimeline, date: string): EnrollmentConfigurationParams | null {
  return segmentInForceOn(timeline, date)?.configuration ?? null;
}

/**
 * Whether the provider deducts for the individual on `date` or will later: what a termination
 * must end, whatever happened to changes requested since.
 */
export function enrolledOnOrAfter(timeline: AppliedTimeline, date: string): boolean {
  return inForceOn(timeline, date) !== null || timeline.some((s) => s.from > date && s.configuration !== null);
}

/** The date from which an enrollment in force before `date` no longer applies, when it ends on or after it. */
export function endedOnOf(timeline: AppliedTimeline): string | null {
  const last = timeline[timeline.length - 1];
  return last && last.configuration === null ? last.from : null;
}
