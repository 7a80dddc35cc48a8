/**
 * Retries an assertion until it passes or the timeout ends, then rethrows its last failure.
 * Asynchronous outcomes (relay, consumers, sagas) are awaited with this, never with sleeps.
 */
export async function expectEventually<T>(
  assertion: () => T | Promise<T>,
  { timeoutMs = 15_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
