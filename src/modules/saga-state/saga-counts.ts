import { Injectable, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SagaState, SagaType } from '../../domain/sagas/saga';
import { keptCountRows, KeptCountsModule, SAGA_COUNTS } from '../../infrastructure/database/kept-counts';

export interface SagaCount {
  type: SagaType;
  state: SagaState;
  n: number;
}

/**
 * Sagas counted by type and state without reading `sagas`, which is kept for good (migration
 * 1798800000000, kept-counts.ts): exact at the reader's snapshot whatever the table's size.
 */
@Injectable()
export class SagaCounts {
  constructor(private readonly dataSource: DataSource) {}

  /** Every type and state with sagas in it. */
  async all(): Promise<SagaCount[]> {
    const rows: { type: SagaType; state: SagaState; n: string }[] = await this.dataSource.query(keptCountRows(SAGA_COUNTS));
    return rows.map((r) => ({ type: r.type, state: r.state, n: Number(r.n) }));
  }

  /** How many sagas are of this type and in this state (either left out: any). */
  async count(filter: { type?: SagaType; state?: SagaState } = {}): Promise<number> {
    return (await this.all()).filter((c) => (filter.type === undefined || c.type === filter.type) && (filter.state === undefined || c.state === filter.state)).reduce((sum, c) => sum + c.n, 0);
  }
}

@Module({ imports: [KeptCountsModule], providers: [SagaCounts], exports: [SagaCounts] })
export class SagaCountsModule {}
