import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { JobWorker } from './job-worker';

/** Starts the job worker once every module has registered its handlers; stops it on shutdown. */
@Injectable()
export class JobsLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(JobsLifecycle.name);

  constructor(
    private readonly config: AppConfig,
    private readonly worker: JobWorker,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.WORKERS_ENABLED) {
      this.logger.log('workers disabled: jobs enqueued here run on other instances');
      return;
    }
    this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
  }
}
