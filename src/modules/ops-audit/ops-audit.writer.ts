import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock, CLOCK } from '../../domain/shared/clock';

export interface OpsAction {
  /** The ops username. */
  actor: string;
  /** e.g. `task.complete`, `policy.create`, `dead_letter.replay` */
  action: string;
  targetType: string;
  targetId: string;
  detail?: Record<string, unknown>;
}

/** Every ops action is recorded (who, when, what) in the transaction that carries it out. */
@Injectable()
export class OpsAuditWriter {
  constructor(@Inject(CLOCK) private readonly clock: Clock) {}

  async record(manager: EntityManager, action: OpsAction): Promise<void> {
    await manager.query(
      `INSERT INTO ops_audit (actor, action, target_type, target_id, detail, at) VALUES ($1, $2, $3, $4, $5::jsonb, $6)`,
      [action.actor, action.action, action.targetType, action.targetId, action.detail === undefined ? null : JSON.stringify(action.detail), this.clock.now()],
    );
  }
}
