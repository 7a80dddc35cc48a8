import { individualNotFound, notFoundMessage, paymentNotFound } from './not-found-messages';

describe('notFoundMessage', () => {
  const id = '3c1f6a2e-8b4d-4e9f-a1c2-7d5e6f8a9b0c';
  const completedAt = new Date('2026-06-01T12:00:00Z');

  it('keeps the plain message while reads are live', () => {
    expect(notFoundMessage(paymentNotFound(id), undefined)).toBe(`No payment ${id} for this entity`);
  });

  it('says when the data was synced and what shows a newer record', () => {
    expect(notFoundMessage(paymentNotFound(id), { completedAt })).toBe(
      `No payment ${id} in this entity's data as of its last sync (2026-06-01T12:00:00.000Z). ` +
        'A pay run made since shows after the next sync (POST /jobs/automated).',
    );
  });

  it('names the sync under way, or only says there is one when it has no pollable id', () => {
    const job = 'f0e1d2c3-b4a5-4968-8776-655443322110';
    expect(notFoundMessage(individualNotFound(id), { completedAt, openSync: { id: job, kind: 'automated', status: 'in_progress' } })).toBe(
      `No individual ${id} in this entity's data as of its last sync (2026-06-01T12:00:00.000Z). ` +
        `Someone added since shows after the next sync (POST /jobs/automated). Sync ${job} is running (GET /jobs/automated/${job}).`,
    );
    expect(notFoundMessage(individualNotFound(id), { completedAt, openSync: { id: job, kind: 'internal', status: 'pending' } })).toMatch(
      /\(POST \/jobs\/automated\)\. A sync is queued\.$/,
    );
  });
});
