// Suites against real PostgreSQL and Kafka wait on real I/O (broker rebalances take seconds), and
// the run keeps both cores busy with suites side by side, so a test's own CPU comes slower than
// when it runs alone: two minutes, not one (a test that hangs still fails, and says where).
jest.setTimeout(120_000);
