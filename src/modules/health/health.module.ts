import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DatabaseHealthIndicator } from './database.health';
import { HealthController } from './health.controller';
import { KafkaHealthIndicator } from './kafka.health';

/** Liveness, readiness and Prometheus metrics. */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [DatabaseHealthIndicator, KafkaHealthIndicator],
})
export class HealthModule {}
