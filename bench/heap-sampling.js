/**
 * Preloaded (`node -r`) into the service under test when BENCH_HEAP_SAMPLES=<dir> is set
 * (bench/bench-service.ts): V8's sampling heap profiler, counting the objects the collections
 * freed as well, so that a profile is what the process allocated over its span, not what it
 * kept. A profile every BENCH_HEAP_SAMPLES_MS (5,000 ms) and one at exit, written as
 * `<dir>/<pid>-<n>-<epoch ms>.heapprofile` (Chrome's DevTools load them); bench/heap-samples.ts
 * sums them up.
 */
'use strict';
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');

const dir = process.env.BENCH_HEAP_SAMPLES_DIR;
if (dir) {
  const everyMs = Number(process.env.BENCH_HEAP_SAMPLES_MS || 5000);
  const session = new Session();
  session.connect();
  // One sample per 16 KB allocated on average: at ~50 KB an event, a few per event.
  const start = () =>
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  let n = 0;
  // The inspector answers a session of the main thread at once, so this runs whole on 'exit' too.
  const write = (again) =>
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (!error && result) {
        const file = `${process.pid}-${String(n++).padStart(4, '0')}-${Date.now()}.heapprofile`;
        writeFileSync(join(dir, file), JSON.stringify(result.profile));
      }
      if (again) start();
    });
  start();
  setInterval(() => write(true), everyMs).unref();
  process.once('exit', () => write(false));
}
