import { jobsToRead, SagaProgress, sagasToLock, sagaWrites } from './saga-progress';

const at = new Date('2026-03-02T10:00:00Z');
const newSaga = (id: string) => ({ id, type: 'new_hire' as const, connectionId: 'c1', entityId: 'e1', steps: [{ at: at.toISOString(), name: 'received' }], at });

describe('SagaProgress', () => {
  it('locks the stored sagas it names and the jobs it moves, never the sagas it starts', () => {
    const progress = new SagaProgress();
    progress.start(newSaga('new'));
    progress.waitFor('new', 'job-a', 'pending');
    progress.waitFor('stored', 'job-a', 'pending');
    progress.step('other', { at: at.toISOString(), name: 'noted' });
    progress.jobEnded('job-b', 'complete', at);
    progress.jobRetried('job-c', at);

    const { named, jobIds } = sagasToLock(progress);

    expect(named.sort()).toEqual(['other', 'stored']);
    expect(jobIds.sort()).toEqual(['job-b', 'job-c']);
  });

  it('reads only the statuses of jobs a wait did not give', () => {
    const progress = new SagaProgress();
    progress.waitFor('s1', 'known', 'pending');
    progress.waitFor('s1', 'unknown');
    progress.waitFor('s2', 'unknown');

    expect(jobsToRead(progress)).toEqual(['unknown']);
  });

  it('inserts a started saga waiting on a pending job, and drops a wait on a job that was not found', () => {
    const progress = new SagaProgress();
    progress.start(newSaga('s1'));
    progress.waitFor('s1', 'job-a', 'pending');
    progress.waitFor('s1', 'gone');

    const writes = sagaWrites(progress, [], [], new Map());

    expect(writes.started).toEqual([expect.objectContaining({ id: 's1', state: 'waiting', outcome: null, source_event_id: null, steps: newSaga('s1').steps })]);
    expect(writes.waits).toEqual([{ sagaId: 's1', jobId: 'job-a', status: 'pending', individualIds: null }]);
    expect(writes.updated).toEqual([]);
  });

  it('completes a stored saga whose last job ended, with the job step and its wait status', () => {
    const progress = new SagaProgress();
    progress.jobEnded('job-a', 'complete', at);
    const stored = [
      { saga_id: 's1', job_id: 'job-a', status: null, individual_ids: null },
      { saga_id: 's1', job_id: 'job-b', status: 'complete', individual_ids: null },
    ];

    const writes = sagaWrites(progress, [{ id: 's1', state: 'waiting', outcome: null }], stored, new Map());

    expect(writes.updated).toEqual([{ id: 's1', steps: [{ at: at.toISOString(), name: 'job_complete', detail: { job_id: 'job-a' } }], state: 'completed', outcome: 'jobs_complete' }]);
    expect(writes.waitStatuses).toEqual([{ sagaId: 's1', jobId: 'job-a', status: 'complete' }]);
  });

  it('keeps a saga waiting while another of its jobs runs', () => {
    const progress = new SagaProgress();
    progress.jobEnded('job-a', 'error', at);
    const stored = [
      { saga_id: 's1', job_id: 'job-a', status: null, individual_ids: null },
      { saga_id: 's1', job_id: 'job-b', status: null, individual_ids: null },
    ];

    const writes = sagaWrites(progress, [{ id: 's1', state: 'waiting', outcome: null }], stored, new Map());

    expect(writes.updated).toEqual([expect.objectContaining({ id: 's1', state: 'waiting', outcome: null })]);
  });

  it("gives each saga of a shared job its own individuals' status", () => {
    const progress = new SagaProgress();
    progress.jobEnded('shared', 'complete', at, new Map([['i1', 'done'], ['i2', 'failed']] as const));
    const stored = [
      { saga_id: 's1', job_id: 'shared', status: null, individual_ids: ['i1'] },
      { saga_id: 's2', job_id: 'shared', status: null, individual_ids: ['i2'] },
    ];
    const locked = [
      { id: 's1', state: 'waiting' as const, outcome: null },
      { id: 's2', state: 'waiting' as const, outcome: null },
    ];

    const writes = sagaWrites(progress, locked, stored, new Map());

    expect(writes.updated.map((u) => [u.id, u.state, u.outcome, u.steps[0]?.name])).toEqual([
      ['s1', 'completed', 'jobs_complete', 'job_complete'],
      ['s2', 'failed', 'job_failed', 'job_error'],
    ]);
    expect(writes.waitStatuses.map((w) => w.status)).toEqual(['complete', 'error']);
  });

  it('reopens a failed saga when its job is retried, and leaves untouched sagas out', () => {
    const progress = new SagaProgress();
    progress.jobRetried('job-a', at);
    const stored = [
      { saga_id: 's1', job_id: 'job-a', status: 'error', individual_ids: null },
      { saga_id: 's2', job_id: 'job-z', status: 'complete', individual_ids: null },
    ];
    const locked = [
      { id: 's1', state: 'failed' as const, outcome: 'job_failed' },
      { id: 's2', state: 'completed' as const, outcome: 'jobs_complete' },
    ];

    const writes = sagaWrites(progress, locked, stored, new Map());

    expect(writes.updated).toEqual([{ id: 's1', steps: [{ at: at.toISOString(), name: 'job_retried', detail: { job_id: 'job-a' } }], state: 'waiting', outcome: null }]);
    expect(writes.waitStatuses).toEqual([{ sagaId: 's1', jobId: 'job-a', status: null }]);
  });

  it('ends a saga outright whatever its jobs say', () => {
    const progress = new SagaProgress();
    progress.end('s1', { at: at.toISOString(), name: 'cancelled' }, 'failed', 'cancelled', at);
    const stored = [{ saga_id: 's1', job_id: 'job-a', status: 'complete', individual_ids: null }];

    const writes = sagaWrites(progress, [{ id: 's1', state: 'waiting', outcome: null }], stored, new Map());

    expect(writes.updated).toEqual([{ id: 's1', steps: [{ at: at.toISOString(), name: 'cancelled' }], state: 'failed', outcome: 'cancelled' }]);
  });

  it('settles a new wait from the status read for it', () => {
    const progress = new SagaProgress();
    progress.waitFor('s1', 'job-a');

    const writes = sagaWrites(progress, [{ id: 's1', state: 'started', outcome: null }], [], new Map([['job-a', 'complete']]));

    expect(writes.waits).toEqual([{ sagaId: 's1', jobId: 'job-a', status: 'complete', individualIds: null }]);
    expect(writes.updated).toEqual([{ id: 's1', steps: [], state: 'completed', outcome: 'jobs_complete' }]);
  });
});
