// The part of autocannon's programmatic API the benchmarks use (the package ships no types).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
      headers?: Record<string, string>;
      body?: string | Buffer;
      connections?: number;
      pipelining?: number;
      /** Seconds. */
      duration?: number;
      /** Requests per second across all connections (a fixed load). */
      overallRate?: number;
      /** Seconds before a request counts as timed out. */
      timeout?: number;
      requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer }[];
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      p99_9: number;
    }

    interface Result {
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      /** Seconds. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance extends PromiseLike<Result> {
      stop(): void;
    }
  }

  /** Without a callback, the instance is a thenable of the result. */
  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
