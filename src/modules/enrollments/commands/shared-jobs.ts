import { RequestItem } from '../../../domain/enrollments/enrollment-ledger';
import { OpenEnrollment } from '../enrollment-lifecycle';

/** Requests that share a job, and which of them each request went into (undefined: it was not opened). */
export interface SharedRequests {
  shared: OpenEnrollment[];
  of: (number | undefined)[];
}

/**
 * The requests of one batch (an HRIS batch's sagas), merged so that they share jobs: one request
 * per benefit and operation (and date, for an unenroll) instead of one per event, so a batch of
 * 500 contribution changes of a benefit is one job, one group per date and one pair of outbox
 * events instead of 500. Each item keeps its own request's `occurredAt` and saga, so staleness
 * and saga progress stay per event.
 *
 * Order is kept where it means something: a request naming an individual of a benefit that an
 * earlier request of the batch named goes into a later round (a request of its own, opened
 * after), so it takes them over from the earlier one as it did when each event had its own job.
 * Requests of different individuals have no order between them.
 */
export function shareJobs(requests: readonly (OpenEnrollment | undefined)[]): SharedRequests {
  const rounds: { round: number; request: OpenEnrollment & { request: { items: RequestItem[] } } }[] = [];
  const of: (number | undefined)[] = [];
  const lastRound = new Map<string, number>();
  const byKey = new Map<string, number>();
  requests.forEach((open, i) => {
    if (!open) return;
    const { request, benefit } = open;
    const named = request.items.map((item) => `${benefit.id}|${item.individualId}`);
    const round = 1 + Math.max(-1, ...named.map((key) => lastRound.get(key) ?? -1));
    const key = [round, benefit.id, request.operation, request.operation === 'unenroll' ? request.items[0]?.effectiveDate : ''].join('|');
    const items = request.items.map((item) => ({ ...item, occurredAt: item.occurredAt === undefined ? request.occurredAt : item.occurredAt, sagaId: item.sagaId ?? request.sagaId }));
    let at = byKey.get(key);
    if (at === undefined) {
      at = rounds.length;
      byKey.set(key, at);
      rounds.push({ round, request: { ...open, request: { ...request, items, occurredAt: null, sagaId: undefined } } });
    } else {
      rounds[at].request.request.items.push(...items);
    }
    for (const k of named) lastRound.set(k, round);
    of[i] = at;
  });
  // By round (the sort is stable: within one, in order of first appearance).
  const order = rounds.map((_, at) => at).sort((a, b) => rounds[a].round - rounds[b].round);
  const place = new Map(order.map((at, k) => [at, k]));
  return { shared: order.map((at) => rounds[at].request), of: requests.map((_, i) => (of[i] === undefined ? undefined : place.get(of[i]!))) };
}
