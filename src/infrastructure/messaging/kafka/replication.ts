/** How the topics the service creates are replicated, from the settings and the cluster's size. */
export interface Replication {
  replicationFactor: number;
  minInSyncReplicas: number;
}

export interface ReplicationSettings {
  replicationFactor?: number;
  minInSyncReplicas?: number;
}

/**
 * Unset settings follow the cluster: three replicas and two in sync on three brokers or more
 * (a write survives one broker down), one and one below. A factor the cluster cannot hold is an
 * error at start, not topics that can never be written.
 */
export function replicationFor(brokers: number, settings: ReplicationSettings): Replication | { error: string } {
  const replicationFactor = settings.replicationFactor ?? (brokers >= 3 ? 3 : 1);
  if (replicationFactor > brokers) {
    return {
      error: `KAFKA_REPLICATION_FACTOR is ${replicationFactor} but the cluster has ${brokers} broker${brokers === 1 ? '' : 's'}: topics could not be created`,
    };
  }
  const minInSyncReplicas = settings.minInSyncReplicas ?? (replicationFactor >= 3 ? 2 : 1);
  if (minInSyncReplicas > replicationFactor) {
    return { error: `KAFKA_MIN_INSYNC_REPLICAS (${minInSyncReplicas}) is above the replication factor (${replicationFactor}): no write could ever succeed` };
  }
  return { replicationFactor, minInSyncReplicas };
}

export interface PartitionState {
  topic: string;
  partition: number;
  /** -1 when the partition has no leader. */
  leader: number;
  isr: number[];
}

/**
 * Why the topics cannot take writes with `acks=all`, one line per partition that cannot (no
 * leader, a leader that does not answer, or fewer replicas in sync than its topic's
 * `min.insync.replicas`); empty when all can. `answers` says whether a broker answered just now:
 * with two of three KRaft nodes gone the controller quorum is lost, the metadata is no longer
 * updated and still names the dead brokers as leaders and in sync, so only they can tell.
 */
export function writeProblems(
  partitions: readonly PartitionState[],
  minInSyncOf: (topic: string) => number,
  answers: (broker: number) => boolean = () => true,
): string[] {
  const problems: string[] = [];
  for (const p of partitions) {
    const min = minInSyncOf(p.topic);
    const inSync = p.isr.filter(answers);
    if (p.leader < 0) problems.push(`${p.topic} partition ${p.partition} has no leader`);
    else if (!answers(p.leader)) problems.push(`${p.topic} partition ${p.partition} has no leader that answers (broker ${p.leader} does not)`);
    else if (inSync.length < min) {
      const silent = p.isr.filter((broker) => !answers(broker));
      const why = silent.length === 0 ? '' : ` (listed in sync but not answering: broker${silent.length === 1 ? '' : 's'} ${silent.join(', ')})`;
      problems.push(`${p.topic} partition ${p.partition} has ${inSync.length} in-sync replica${inSync.length === 1 ? '' : 's'}, below min.insync.replicas ${min}${why}`);
    }
  }
  return problems;
}
