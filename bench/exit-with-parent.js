/**
 * Preloaded (`node -r`) into the child processes that the tests, the fault suite and the
 * benchmarks start: when stdin is a pipe from the parent, its closing means the parent is gone
 * (exited, crashed or SIGKILLed), and the child goes too, at once, instead of living on with its
 * ports, database connections and consumer-group membership. With any other stdin it does nothing.
 */
'use strict';
const { fstatSync } = require('node:fs');

let pipe = false;
try {
  pipe = fstatSync(0).isFIFO();
} catch {
  // no stdin at all
}
if (pipe) {
  const stdin = process.stdin;
  stdin.on('data', () => {});
  stdin.once('close', () => process.kill(process.pid, 'SIGKILL'));
  stdin.once('error', () => process.kill(process.pid, 'SIGKILL'));
  // Watching must not keep a process alive that has finished its work (the CLI).
  stdin.unref();
}
