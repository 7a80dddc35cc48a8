import { Module, OnModuleInit } from '@nestjs/common';
import { MessageHandlerRegistry } from '../../infrastructure/messaging/message-handler-registry';
import { ApplicationsModule } from '../applications/applications.module';
import { AuthModule } from '../auth/auth.module';
import { BenefitsModule } from '../benefits/benefits.module';
import { EnrollmentsModule } from '../enrollments/enrollments.module';
import { HrisEventsConsumer } from './hris-events.consumer';
import { HrisEventsController } from './hris-events.controller';
import { HrisIntakeService } from './hris-intake.service';

/**
 * HRIS events (`hris.events` on Kafka, or `POST /hris/events`): validated, deduplicated by the
 * inbox, and handed to the sagas (src/sagas subscribe to HrisEventAccepted), which act through
 * the same enrollment commands as the REST API.
 */
@Module({
  imports: [ApplicationsModule, AuthModule, BenefitsModule, EnrollmentsModule],
  controllers: [HrisEventsController],
  providers: [HrisEventsConsumer, HrisIntakeService],
})
export class HrisEventsModule implements OnModuleInit {
  constructor(
    private readonly registry: MessageHandlerRegistry,
    private readonly consumer: HrisEventsConsumer,
  ) {}

  onModuleInit(): void {
    this.registry.register(this.consumer);
  }
}
