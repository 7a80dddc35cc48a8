import { Module } from '@nestjs/common';

/** Data syncs and jobs: /jobs/automated, /sandbox/jobs, the job workers. */
@Module({})
export class SyncModule {}
