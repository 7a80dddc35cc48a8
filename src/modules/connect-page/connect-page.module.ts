import { Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { AuthModule } from '../auth/auth.module';
import { ProvidersModule } from '../providers/providers.module';
import { ConnectFlowService } from './connect-flow.service';
import { ConnectPageController } from './connect-page.controller';
import { FlowStateSigner } from './flow-state';
import { useFormBodyParser } from './form-body-parser';
import { GustoOAuthStep } from './gusto-oauth-step';

/** The hosted connect page (HTML) that turns a connect session into a connection and a code. */
@Module({
  imports: [AuthModule, ProvidersModule],
  controllers: [ConnectPageController],
  providers: [
    ConnectFlowService,
    GustoOAuthStep,
    {
      provide: FlowStateSigner,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => FlowStateSigner.fromSecret(config.CONNECT_PAGE_SIGNING_KEY),
    },
  ],
})
export class ConnectPageModule implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  /**
   * Runs during app.init(), after the app has replaced Fastify's parsers with its JSON-only
   * one, so the page's form parser is added on top of it rather than wiped.
   */
  onModuleInit(): void {
    useFormBodyParser(this.adapterHost.httpAdapter.getInstance<FastifyInstance>());
  }
}
