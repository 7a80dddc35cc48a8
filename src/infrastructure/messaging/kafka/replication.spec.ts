import { replicationFor, writeProblems } from './replication';

describe('replicationFor', () => {
  it('follows the cluster when unset: 3 and 2 from three brokers, 1 and 1 below', () => {
    expect(replicationFor(1, {})).toEqual({ replicationFactor: 1, minInSyncReplicas: 1 });
    expect(replicationFor(2, {})).toEqual({ replicationFactor: 1, minInSyncReplicas: 1 });
    expect(replicationFor(3, {})).toEqual({ replicationFactor: 3, minInSyncReplicas: 2 });
    expect(replicationFor(5, {})).toEqual({ replicationFactor: 3, minInSyncReplicas: 2 });
  });

  it('takes the settings, with min.insync.replicas following the factor when unset', () => {
    expect(replicationFor(5, { replicationFactor: 5 })).toEqual({ replicationFactor: 5, minInSyncReplicas: 2 });
    expect(replicationFor(3, { replicationFactor: 2 })).toEqual({ replicationFactor: 2, minInSyncReplicas: 1 });
    expect(replicationFor(3, { replicationFactor: 3, minInSyncReplicas: 3 })).toEqual({ replicationFactor: 3, minInSyncReplicas: 3 });
  });

  it('refuses a factor the cluster cannot hold and a minimum above the factor', () => {
    expect(replicationFor(1, { replicationFactor: 3 })).toEqual({ error: expect.stringContaining('the cluster has 1 broker') });
    expect(replicationFor(3, { replicationFactor: 2, minInSyncReplicas: 3 })).toEqual({ error: expect.stringContaining('above the replication factor') });
  });
});

describe('writeProblems', () => {
  const min = (topic: string) => (topic === 'strict' ? 3 : 2);

  it('names each partition without a leader or below its topic’s minimum, and nothing else', () => {
    expect(
      writeProblems(
        [
          { topic: 'a', partition: 0, leader: 1, isr: [1, 2, 3] },
          { topic: 'a', partition: 1, leader: 2, isr: [2, 3] },
          { topic: 'a', partition: 2, leader: 3, isr: [3] },
          { topic: 'a', partition: 3, leader: -1, isr: [] },
          { topic: 'strict', partition: 0, leader: 1, isr: [1, 2] },
        ],
        min,
      ),
    ).toEqual([
      'a partition 2 has 1 in-sync replica, below min.insync.replicas 2',
      'a partition 3 has no leader',
      'strict partition 0 has 2 in-sync replicas, below min.insync.replicas 3',
    ]);
  });

  it('is empty when every partition can take writes', () => {
    expect(writeProblems([{ topic: 'a', partition: 0, leader: 1, isr: [1, 2] }], min)).toEqual([]);
  });

  // Two of three KRaft nodes killed: no quorum, so the metadata still shows them leading and in sync.
  it('counts only the brokers that answer, whatever the metadata still lists', () => {
    const answers = (broker: number) => broker === 1;
    expect(
      writeProblems(
        [
          { topic: 'a', partition: 0, leader: 1, isr: [1, 2] },
          { topic: 'a', partition: 1, leader: 2, isr: [2, 1] },
          { topic: 'a', partition: 2, leader: 1, isr: [1, 2, 3] },
          { topic: 'a', partition: 3, leader: -1, isr: [] },
        ],
        min,
        answers,
      ),
    ).toEqual([
      'a partition 0 has 1 in-sync replica, below min.insync.replicas 2 (listed in sync but not answering: broker 2)',
      'a partition 1 has no leader that answers (broker 2 does not)',
      'a partition 2 has 1 in-sync replica, below min.insync.replicas 2 (listed in sync but not answering: brokers 2, 3)',
      'a partition 3 has no leader',
    ]);
  });

  it('takes one broker that does not answer while enough others in sync do', () => {
    expect(writeProblems([{ topic: 'a', partition: 0, leader: 1, isr: [1, 2, 3] }], min, (broker) => broker !== 3)).toEqual([]);
  });
});
