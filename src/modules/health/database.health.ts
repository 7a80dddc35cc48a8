import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';

const PROBE_TIMEOUT_MS = 2_000;

/**
 * Whether the database answers, asked over a connection of its own. Through the service's pool
 * the probe queued behind whatever work the instance had accepted: an instance busy with large
 * enrollments failed readiness for minutes and was taken out of rotation while it was healthy,
 * and with every instance busy, so was the whole service. A busy instance sheds load by its
 * answers (429 and 503 with Retry-After); readiness says only that its dependencies are there.
 * The embedded database is one session, so there the probe uses the pool's.
 */
@Injectable()
export class DatabaseHealthIndicator implements OnApplicationShutdown {
  private readonly probe: Pool | undefined;

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    this.probe = config.embedded
      ? undefined
      : new Pool({
          connectionString: config.DATABASE_URL,
          max: 1,
          connectionTimeoutMillis: PROBE_TIMEOUT_MS,
          query_timeout: PROBE_TIMEOUT_MS,
          application_name: 'benefits-readiness',
        });
    // A dropped probe connection (a database restart) is replaced at the next check.
    this.probe?.on('error', () => undefined);
  }

  async check(key = 'database') {
    const indicator = this.indicators.check(key);
    try {
      if (this.probe) await this.probe.query('SELECT 1');
      else await withTimeout(this.dataSource.query('SELECT 1'), PROBE_TIMEOUT_MS);
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.probe?.end();
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
