/**
 * A jest reporter beside the default one: at the end of a run it prints the ten slowest suites
 * and the run's own totals (wall time, suites, tests), so a regression in test time shows in the
 * run that caused it. With TEST_DURATIONS_FILE set, it also writes every suite's duration there
 * (seconds by path from the root), the form of test/runner/suite-durations.json.
 */
'use strict';
const { relative } = require('node:path');
const { writeFileSync } = require('node:fs');

class DurationsReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.started = Date.now();
    this.suites = [];
  }

  onRunStart() {
    this.started = Date.now();
  }

  onTestResult(test, result) {
    const seconds = (result.perfStats.end - result.perfStats.start) / 1000;
    this.suites.push({ path: relative(this.rootDir, test.path), seconds, failed: result.numFailingTests > 0 || Boolean(result.testExecError) });
  }

  onRunComplete(_contexts, results) {
    const wall = (Date.now() - this.started) / 1000;
    const slowest = [...this.suites].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
    const width = Math.max(0, ...slowest.map((s) => s.path.length));
    const lines = ['', 'Slowest suites:'];
    for (const suite of slowest) lines.push(`  ${suite.seconds.toFixed(1).padStart(7)} s  ${suite.path.padEnd(width)}${suite.failed ? '  (failed)' : ''}`);
    const busy = this.suites.reduce((sum, s) => sum + s.seconds, 0);
    lines.push(
      `Test run: ${wall.toFixed(1)} s wall, ${busy.toFixed(0)} s of suites (${(busy / Math.max(wall, 1)).toFixed(1)} at once on average), ` +
        `${results.numTotalTestSuites} suites, ${results.numTotalTests} tests, ${results.numFailedTests} failed`,
    );
    // The plain closing line that tools reading a run's end look for.
    lines.push(`Tests: ${results.numPassedTests} passed, ${results.numFailedTests + results.numRuntimeErrorTestSuites} failed, ${results.numPendingTests + results.numTodoTests} skipped`);
    console.log(lines.join('\n'));
    if (process.env.TEST_DURATIONS_FILE) {
      const durations = Object.fromEntries([...this.suites].sort((a, b) => a.path.localeCompare(b.path)).map((s) => [s.path, Math.round(s.seconds * 10) / 10]));
      writeFileSync(process.env.TEST_DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
    }
  }
}

module.exports = DurationsReporter;
