/* eslint-disable @typescript-eslint/no-require-imports */
import './kafkajs-stop-guard';

// kafkajs 2.2.4's consumer runner, driven through its own fetch manager with a fake consumer group.
const Runner = require('kafkajs/src/consumer/runner');

const quiet = { namespace: () => quiet, info: () => undefined, debug: () => undefined, warn: () => undefined, error: () => undefined };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks of the brokers' node ids after the runner was stopped: each is one fetch attempt. */
const SPIN_LIMIT = 10_000;

describe('kafkajs stop guard', () => {
  it('stops a consumer whose fetchers are being remade after a broker left, instead of spinning for ever', async () => {
    let nodeIds = [1, 2];
    let stopped = false;
    let holding = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let fetchesAfterStop = 0;
    const consumerGroup = {
      groupId: 'g',
      memberId: 'm',
      connect: async () => undefined,
      joinAndSync: async () => undefined,
      leave: async () => undefined,
      heartbeat: async () => undefined,
      commitOffsets: async () => undefined,
      commitOffsetsIfNecessary: async () => undefined,
      // Every fetch asks for the node ids first (to see whether the brokers changed).
      getNodeIds: () => {
        if (stopped && ++fetchesAfterStop > SPIN_LIMIT) throw new Error('spinning: fetched without pause after the stop');
        return nodeIds;
      },
      // A broker's long poll: nothing to read; node 2's polls wait while the test holds them.
      fetch: async (nodeId: number) => {
        await (nodeId === 2 && holding ? held : pause(5));
        return [];
      },
    };
    const runner = new Runner({
      logger: quiet,
      consumerGroup,
      instrumentationEmitter: { emit: () => undefined },
      eachBatch: async () => undefined,
      concurrency: 1,
      heartbeatInterval: 3_000,
      onCrash: () => undefined,
      retry: { retries: 5, initialRetryTime: 10 },
    });
    await runner.start();
    await pause(20);

    // Broker 2 leaves while its fetch is held: node 1's next fetch sees it, and the fetch manager
    // stops its fetchers (waiting for node 2's) to make new ones. The runner is stopped in that
    // window, then node 2's fetch returns.
    holding = true;
    await pause(20);
    nodeIds = [1];
    await pause(20);
    stopped = true;
    const stopping = runner.stop();
    release();
    await stopping;

    expect(fetchesAfterStop).toBeLessThan(100);
  });
});
