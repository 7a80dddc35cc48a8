import { Global, Module } from '@nestjs/common';
import { CLOCK, SystemClock } from '../../domain/shared/clock';

/** Time is a port: effective dates, SLAs and schedules read it; tests replace it with a ManualClock. */
@Global()
@Module({ providers: [{ provide: CLOCK, useClass: SystemClock }], exports: [CLOCK] })
export class ClockModule {}
