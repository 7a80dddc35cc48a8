import { Inject, Logger, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { loadDashboardAssets } from './dashboard-assets';
import { DASHBOARD_ASSETS, LoadedDashboardAssets, OpsDashboardController } from './ops-dashboard.controller';
import { OpsSignInCheck } from './ops-sign-in';

/**
 * The ops dashboard page at /ops. Its files are read once at start; if they are missing from
 * the build, the service still starts (the API is what matters) and /ops answers an error
 * naming where they were looked for. `/ops/`, as people type it and as `/docs/` works, is sent
 * to `/ops` (308): one address for the page.
 */
@Module({
  controllers: [OpsDashboardController],
  providers: [
    OpsSignInCheck,
    {
      provide: DASHBOARD_ASSETS,
      useFactory: (): LoadedDashboardAssets => {
        try {
          return loadDashboardAssets();
        } catch (error) {
          new Logger('OpsDashboard').error((error as Error).message);
          return error as Error;
        }
      },
    },
  ],
})
export class OpsDashboardModule implements OnModuleInit {
  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    fastify?.get('/ops/', (_request, reply) => void reply.redirect('/ops', 308));
  }
}
