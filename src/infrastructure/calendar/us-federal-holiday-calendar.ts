import { allForYear } from '@18f/us-federal-holidays';
import { HolidayCalendar } from '../../domain/calendar/business-days';

/**
 * US federal holidays as observed (a Saturday holiday on the Friday before, a Sunday one on the
 * Monday after), from 18F's `@18f/us-federal-holidays`. Inauguration Day is left out: it is a
 * holiday only for federal employees around Washington, DC.
 */
export class UsFederalHolidayCalendar implements HolidayCalendar {
  private readonly byYear = new Map<number, ReadonlySet<string>>();

  isHoliday(date: string): boolean {
    const year = Number(date.slice(0, 4));
    return this.observedIn(year).has(date);
  }

  /** Observed dates that fall in `year`, including next New Year's Day observed on Dec 31. */
  private observedIn(year: number): ReadonlySet<string> {
    let dates = this.byYear.get(year);
    if (!dates) {
      // Each library year lists its holidays' observed dates; the Jan 1 of year + 1 may be observed in `year`.
      const candidates = [year, year + 1].flatMap((y) => allForYear(y).map((h) => h.dateString));
      dates = new Set(candidates.filter((d) => d.startsWith(`${year}-`)));
      this.byYear.set(year, dates);
    }
    return dates;
  }
}
