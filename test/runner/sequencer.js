/**
 * Orders the suites longest first, so that with several workers the long ones (the fault
 * scenarios, the Kafka cluster, the fuzz suite) start at once and the short ones fill in around
 * them, instead of a long suite starting last and running alone. Durations come from
 * test/runner/suite-durations.json (a full run's, committed, so a fresh clone orders the same),
 * then from jest's own cache of this machine's earlier runs; a suite in neither runs first, as
 * jest's default does (by file size among those).
 * Refresh the file after a full run: TEST_DURATIONS_FILE=test/runner/suite-durations.json npm test
 */
'use strict';
const { relative } = require('node:path');
const { readFileSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const committed = JSON.parse(readFileSync(require.resolve('./suite-durations.json'), 'utf8'));

class LongestFirstSequencer extends Sequencer {
  time(test) {
    const seconds = committed[relative(test.context.config.rootDir, test.path)];
    return seconds === undefined ? super.time(test) : seconds * 1000;
  }
}

module.exports = LongestFirstSequencer;
