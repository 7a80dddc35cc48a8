import { Logger, Module } from '@nestjs/common';
import { loadDashboardAssets } from './dashboard-assets';
import { DASHBOARD_ASSETS, LoadedDashboardAssets, OpsDashboardController } from './ops-dashboard.controller';
import { OpsSignInCheck } from './ops-sign-in';

/**
 * The ops dashboard page at /ops. Its files are read once at start; if they are missing from
 * the build, the service still starts (the API is what matters) and /ops answers an error
 * naming where they were looked for.
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
export class OpsDashboardModule {}
