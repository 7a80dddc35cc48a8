import { stateAfterJobs, statusOfIndividuals, SUPERSEDED } from './saga';

describe('statusOfIndividuals', () => {
  const outcomes = new Map([
    ['a', 'done'],
    ['b', 'failed'],
    ['c', 'superseded'],
    ['d', 'superseded'],
    ['e', 'waiting'],
  ] as const);
  it('is complete when one of the saga’s own succeeded, superseded when all were taken over, else an error', () => {
    expect(statusOfIndividuals(new Set(['a', 'b']), outcomes)).toBe('complete');
    expect(statusOfIndividuals(new Set(['c', 'd']), outcomes)).toBe(SUPERSEDED);
    expect(statusOfIndividuals(new Set(['b', 'c']), outcomes)).toBe('error');
  });
  it('says nothing while one still waits or none has an outcome: the job’s status stands', () => {
    expect(statusOfIndividuals(new Set(['a', 'e']), outcomes)).toBeUndefined();
    expect(statusOfIndividuals(new Set(['z']), outcomes)).toBeUndefined();
  });
  it('feeds the saga’s end as a job status would', () => {
    expect(stateAfterJobs([statusOfIndividuals(new Set(['c']), outcomes)!, 'complete'])).toBe('completed');
    expect(stateAfterJobs([statusOfIndividuals(new Set(['b']), outcomes)!])).toBe('failed');
  });
});
