/**
 * Preloaded (`node -r`) into the child processes that the tests and the fault suite start:
 * when stdin is a pipe from the parent, its closing means the parent is gone
 * (exited, crashed or SIGKILLed), and the child goes too, at once, instead of living on with its
 * ports, database connections and consumer-group membership. With any other stdin it does nothing.
 */
'use strict';
const { fstatSync } = require('node:fs');

let pipe = false;
try {
  // Node gives a child's piped stdio as a socket pair; a shell pipe is a FIFO.
  const stdin = fstatSync(0);
  pipe = stdin.isFIFO() || stdin.isSocket();
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
