// Suites against real PostgreSQL and Kafka wait on real I/O (broker rebalances take seconds).
jest.setTimeout(60_000);
