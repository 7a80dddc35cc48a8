import { Injectable } from '@nestjs/common';
import { WakeSignal } from '../../infrastructure/scheduling/wake-signal';

/** Lets code that enqueued a job wake this process's worker instead of waiting for its next poll. */
@Injectable()
export class JobSignal extends WakeSignal {}
