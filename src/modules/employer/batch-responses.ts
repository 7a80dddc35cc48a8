import { DomainError, invalidRequest, notFound } from '../../domain/shared/domain-error';
import { domainErrorResponse, ErrorBody } from '../../infrastructure/http/error-response';
import { isUuid } from './dto/uuid-param';

/** One item of a batch answer: its id, its own status code, and the record or the spec's error object. */
export type BatchItem<K extends string, T> = { [key in K]: string } & { code: number; body: T | ErrorBody };

/** A failed item: the error object a whole request would have had, with its status as the item's code. */
export function batchError<K extends string>(key: K, id: string, error: DomainError): BatchItem<K, never> {
  const { status, body } = domainErrorResponse(error);
  return { [key]: id, code: status, body } as BatchItem<K, never>;
}

/** The ids worth asking for: well-formed, lowercased, each once. */
export function lookupIds(requested: string[]): string[] {
  return [...new Set(requested.filter(isUuid).map((id) => id.toLowerCase()))];
}

/**
 * Answers a batch of individual ids in request order (a repeated id is answered each time):
 * 200 with the record, 404 for an id the employer does not have, 400 for one that is not a UUID.
 */
export function peopleBatch<T extends { id: string }>(
  requested: string[],
  found: T[],
  notFoundMessage: (id: string) => string,
): BatchItem<'individual_id', T>[] {
  const byId = new Map(found.map((record) => [record.id.toLowerCase(), record]));
  return requested.map((id) => {
    if (!isUuid(id)) return batchError('individual_id', id, invalidRequest('individual_id must be a UUID'));
    const record = byId.get(id.toLowerCase());
    if (!record) return batchError('individual_id', id, notFound(notFoundMessage(id), 'individual_not_found'));
    return { individual_id: id, code: 200, body: record };
  });
}
