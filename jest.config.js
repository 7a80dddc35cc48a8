/**
 * Four projects: unit specs beside the code; integration, e2e and fuzz suites under test/ that
 * run against real PostgreSQL (one database per test file, cloned from a migrated template) and
 * the real Kafka broker. `npm test` (test/run-tests.js) decides what is reachable first.
 */
// TypeScript is transpiled file by file (type-checking is `npm run typecheck`'s): SWC does that
// about ten times faster than ts-jest, with the compiler's decorator metadata (Nest's injection)
// and class-field semantics (tsconfig's ES2022 target).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleFileExtensions: ['ts', 'js', 'json'],
};

module.exports = {
  // Longest suites first (test/runner/sequencer.js); the slowest ten and the totals at the end.
  testSequencer: '<rootDir>/test/runner/sequencer.js',
  reporters: ['default', '<rootDir>/test/runner/durations-reporter.js'],
  // The transpiled service and the build hold .js copies of src/: not modules of the tests.
  modulePathIgnorePatterns: ['<rootDir>/.transpiled/', '<rootDir>/dist/'],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.int-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/slow-tests.ts'],
    },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/slow-tests.ts'],
    },
    // Property-based fuzzing of every route over real HTTP; budget and replay: test/fuzz/README.md.
    {
      ...common,
      displayName: 'fuzz',
      testMatch: ['<rootDir>/test/fuzz/**/*.fuzz-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/setup/slow-tests.ts'],
    },
  ],
};
