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
}

export type AppliedTimeline = readonly AppliedSegment[];

/**
 * The timeline after the provider applied a change: everything from its date on is replaced.
 * Segments that ended before the one in force on `today` are dropped: nothing reads the past.
 */
export function applyToTimeline(
  timeline: AppliedTimeline,
  change: { effectiveDate: string; configuration: EnrollmentConfigurationParams | null },
  today: string,
): AppliedTimeline {
  const kept = timeline.filter((s) => s.from < change.effectiveDate);
  return compacted([...kept, { from: change.effectiveDate, configuration: change.configuration }], today);
}

function compacted(timeline: AppliedSegment[], today: string): AppliedSegment[] {
  let current = -1;
  timeline.forEach((s, i) => {
    if (s.from <= today) current = i;
  });
  const fromCurrent = current > 0 ? timeline.slice(current) : timeline;
  // An ended enrollment in force today with nothing after it says no more than an empty timeline
  // would, but it records when it ended, which the rows show (ended_on): keep it.
  return fromCurrent;
}

/** The configuration in force on `date`, or null. */
export function inForceOn(timeline: AppliedTimeline, date: string): EnrollmentConfigurationParams | null {
  let found: EnrollmentConfigurationParams | null = null;
  for (const segment of timeline) {
    if (segment.from > date) break;
    found = segment.configuration;
  }
  return found;
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
