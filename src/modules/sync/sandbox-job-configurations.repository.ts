import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DATA_SYNC_ALL } from '../../domain/jobs/job';

/** How a sandbox connection's data syncs end (spec "Sandbox job configuration"). */
export const SANDBOX_COMPLETION_STATUSES = ['complete', 'reauth_error', 'permissions_error', 'error'] as const;
export type SandboxCompletionStatus = (typeof SANDBOX_COMPLETION_STATUSES)[number];

export interface SandboxJobConfiguration {
  type: typeof DATA_SYNC_ALL;
  completionStatus: SandboxCompletionStatus;
}

/** One row per sandbox connection that changed its configuration; no row means `complete`. */
@Injectable()
export class SandboxJobConfigurationsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async find(connectionId: string): Promise<SandboxJobConfiguration> {
    const [row] = await this.dataSource.query(
      `SELECT completion_status FROM sandbox_job_configurations WHERE connection_id = $1 AND type = $2`,
      [connectionId, DATA_SYNC_ALL],
    );
    return { type: DATA_SYNC_ALL, completionStatus: row?.completion_status ?? 'complete' };
  }

  async save(connectionId: string, configuration: SandboxJobConfiguration, now: Date): Promise<SandboxJobConfiguration> {
    await this.dataSource.query(
      `INSERT INTO sandbox_job_configurations (connection_id, type, completion_status, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (connection_id) DO UPDATE SET type = EXCLUDED.type, completion_status = EXCLUDED.completion_status,
         updated_at = EXCLUDED.updated_at`,
      [connectionId, configuration.type, configuration.completionStatus, now],
    );
    return this.find(connectionId);
  }
}
