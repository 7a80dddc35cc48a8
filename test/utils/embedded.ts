/**
 * How long a suite's set-up may take to start an embedded database (PGlite) and run every
 * migration on it: that work is WebAssembly on one core, and with the whole test run beside it
 * on two vCPUs it has taken over a minute.
 */
export const EMBEDDED_START_TIMEOUT_MS = 180_000;
