import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { Clock } from './domain/shared/clock';
import { dataSourceOptions } from './infrastructure/database/data-source';
import { ClockModule } from './infrastructure/clock/clock.module';
import { ApiVersionGuard } from './infrastructure/http/api-version';
import { httpLoggerOptions } from './infrastructure/http/http-logger';
import { MessagingModule } from './infrastructure/messaging/messaging.module';
import { ObservabilityModule } from './infrastructure/observability/observability.module';
import { ApplicationsModule } from './modules/applications/applications.module';
import { AuthModule } from './modules/auth/auth.module';
import { ConnectPageModule } from './modules/connect-page/connect-page.module';
import { ConnectionsModule } from './modules/connections/connections.module';
import { HomeModule } from './modules/home/home.module';
import { HealthModule } from './modules/health/health.module';
import { GustoWebhooksModule } from './modules/providers/gusto-webhooks.module';
import { ProvidersModule } from './modules/providers/providers.module';
import { ProviderAdaptersModule } from './infrastructure/providers/provider-adapters.module';
import { SandboxPayrollModule } from './modules/sandbox-payroll/sandbox-payroll.module';
import { ForwardModule } from './modules/forward/forward.module';
import { SyncModule } from './modules/sync/sync.module';
import { ReconciliationModule } from './modules/reconciliation/reconciliation.module';
import { EmployerModule } from './modules/employer/employer.module';
import { RulesModule } from './modules/rules/rules.module';
import { SandboxModule } from './modules/sandbox/sandbox.module';
import { BenefitsModule } from './modules/benefits/benefits.module';
import { AssistedModule } from './modules/assisted/assisted.module';
import { EnrollmentsModule } from './modules/enrollments/enrollments.module';
import { ReconciliationReadsModule } from './modules/reconciliation-reads/reconciliation-reads.module';
import { IdempotencyModule } from './infrastructure/http/idempotency/idempotency.module';
import { OpsAuditModule } from './modules/ops-audit/ops-audit.module';
import { OpsSignInThrottleModule } from './modules/ops-auth/ops-sign-in-throttle';
import { OpsModule } from './modules/ops/ops.module';
import { OpsDashboardModule } from './modules/ops-dashboard/ops-dashboard.module';
import { PoliciesModule } from './modules/policies/policies.module';
import { HrisEventsModule } from './modules/hris-events/hris-events.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';
import { ChangeNotificationsModule } from './infrastructure/database/change-notifications';
import { PartitionUpkeepModule } from './infrastructure/database/partition-upkeep';
import { TableUpkeepModule } from './infrastructure/database/table-upkeep';
import { UnitOfWorkModule } from './infrastructure/database/unit-of-work';
import { SagasRepositoryModule } from './modules/saga-state/saga-state.repository';
import { DomainEventsModule } from './infrastructure/events/domain-events.module';
import { EnrollmentLedgerModule } from './infrastructure/database/repositories/enrollment-ledger.module';
import { SagasModule } from './sagas/sagas.module';
import { ApplicationsService } from './modules/applications/applications.service';

export interface AppModuleOptions {
  config: AppConfig;
  /** The database actually used: DATABASE_URL, or the embedded server's URL. */
  databaseUrl: string;
  /** Feature modules added by tests (e.g. probe controllers). */
  extraModules?: Type[];
  /** The service's time; tests pass a ManualClock. */
  clock?: Clock;
}

@Module({})
export class AppModule {
  static forRoot({ config, databaseUrl, extraModules = [], clock }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(httpLoggerOptions(config)),
        ObservabilityModule,
        ClockModule.forRoot(clock),
        TypeOrmModule.forRoot({
          ...dataSourceOptions({
            url: databaseUrl,
            poolSize: config.embedded ? 1 : config.DATABASE_POOL_SIZE,
            idleTimeoutMs: config.DATABASE_POOL_IDLE_TIMEOUT_MS,
            preparedStatements: config.preparedStatements,
          }),
          // Migrated before the pool opens (migrateDatabase), except on the embedded database.
          migrationsRun: config.embedded,
          autoLoadEntities: true,
        }),
        CqrsModule.forRoot(),
        MessagingModule.forRoot(config),
        HealthModule,
        OpsAuditModule,
        OpsSignInThrottleModule,
        UnitOfWorkModule,
        ChangeNotificationsModule,
        TableUpkeepModule,
        PartitionUpkeepModule,
        DomainEventsModule,
        EnrollmentLedgerModule,
        SagasRepositoryModule,
        ApplicationsModule,
        ProvidersModule,
        GustoWebhooksModule,
        AuthModule,
        ConnectPageModule,
        ConnectionsModule,
        SandboxModule,
        ProviderAdaptersModule,
        SandboxPayrollModule,
        ForwardModule,
        SyncModule,
        ReconciliationModule,
        EmployerModule,
        RulesModule,
        BenefitsModule,
        AssistedModule,
        EnrollmentsModule,
        ReconciliationReadsModule,
        OpsModule,
        OpsDashboardModule,
        PoliciesModule,
        HrisEventsModule,
        WebhooksModule,
        SagasModule,
        HomeModule,
        IdempotencyModule.forRoot({ imports: [ApplicationsModule], verifier: ApplicationsService }),
        ...extraModules,
      ],
      providers: [{ provide: APP_GUARD, useClass: ApiVersionGuard }],
    };
  }
}
