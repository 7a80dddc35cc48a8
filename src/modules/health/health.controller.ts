import { Controller, Get, Header, HttpStatus, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheckService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Metrics } from '../../infrastructure/observability/metrics';
import { DatabaseHealthIndicator } from './database.health';
import { KafkaHealthIndicator } from './kafka.health';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: DatabaseHealthIndicator,
    private readonly kafka: KafkaHealthIndicator,
    private readonly metrics: Metrics,
  ) {}

  /** The process is up and serving; restart it if this fails. */
  @Get('health/live')
  live() {
    return { status: 'ok' };
  }

  /**
   * Dependencies answer; take the instance out of rotation if this fails. A failing probe
   * keeps terminus's per-dependency body (not the API error object): it is read by
   * orchestrators and operators, who need to see which dependency is down.
   */
  @Get('health/ready')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const checks = [() => this.database.check('database')];
    if (this.kafka.configured) checks.push(() => this.kafka.check('kafka'));
    try {
      return await this.health.check(checks);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      reply.status(HttpStatus.SERVICE_UNAVAILABLE);
      return error.getResponse();
    }
  }

  @Get('metrics')
  @Header('cache-control', 'no-store')
  async scrape(@Res({ passthrough: true }) reply: FastifyReply) {
    reply.header('content-type', this.metrics.contentType);
    return this.metrics.render();
  }
}
