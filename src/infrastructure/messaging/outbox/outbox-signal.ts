import { Injectable } from '@nestjs/common';
import { WakeSignal } from '../../scheduling/wake-signal';

/** Lets writers wake the relay instead of waiting for its next poll. */
@Injectable()
export class OutboxSignal extends WakeSignal {}
