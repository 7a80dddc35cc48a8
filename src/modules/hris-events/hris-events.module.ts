import { Module, OnModuleInit } from '@nestjs/common';
import { MessageHandlerRegistry } from '../../infrastructure/messaging/message-handler-registry';
import { ContributionChangeSaga } from '../../sagas/contribution-change.saga';
import { NewHireSaga } from '../../sagas/new-hire.saga';
import { SagaCommands } from './saga-commands';
import { TerminationSaga } from '../../sagas/termination.saga';
import { ApplicationsModule } from '../applications/applications.module';
import { AuthModule } from '../auth/auth.module';
import { BenefitsModule } from '../benefits/benefits.module';
import { EnrollmentsModule } from '../enrollments/enrollments.module';
import { PoliciesModule } from '../policies/policies.module';
import { HrisEventsConsumer } from './hris-events.consumer';
import { HrisEventsController } from './hris-events.controller';
import { HrisIntakeService } from './hris-intake.service';

/**
 * HRIS events (`hris.events` on Kafka, or `POST /hris/events`): validated, deduplicated by the
 * inbox, and routed to the new-hire, contribution-change and termination sagas, which act
 * through the same enrollment commands as the REST API.
 */
@Module({
  imports: [ApplicationsModule, AuthModule, BenefitsModule, EnrollmentsModule, PoliciesModule],
  controllers: [HrisEventsController],
  providers: [SagaCommands, NewHireSaga, ContributionChangeSaga, TerminationSaga, HrisEventsConsumer, HrisIntakeService],
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
