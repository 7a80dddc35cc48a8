import { DynamicModule, Global, Module } from '@nestjs/common';
import { Clock, CLOCK, SystemClock } from '../../domain/shared/clock';

/** Time is a port: effective dates, SLAs and schedules read it; tests replace it with a ManualClock. */
@Global()
@Module({})
export class ClockModule {
  static forRoot(clock: Clock = new SystemClock()): DynamicModule {
    return { module: ClockModule, providers: [{ provide: CLOCK, useValue: clock }], exports: [CLOCK] };
  }
}
