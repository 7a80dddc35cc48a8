import { MigrationInterface, QueryRunner } from 'typeorm';
import { createKeptSubset, dropKeptSubset, KeptSubset } from './kept-subset-triggers';

/**
 * The failed sagas, kept beside `sagas` in a table of their own (kept-subset-triggers.ts), so
 * that the ops dashboard lists them newest first without walking every saga: `sagas` has no index
 * on its state (1798310000000 dropped it so that a saga's moves are HOT updates) and is kept for
 * good, so listing the few failed among millions read them all, newest first, until a page was
 * full. A saga that fails is written here once and leaves when it is retried.
 */
export const FAILED_SAGAS: KeptSubset = {
  table: 'sagas',
  subset: 'failed_sagas',
  reference: 'saga_id',
  column: 'state',
  values: ['failed'],
  copied: [['created_at', 'timestamptz']],
  order: 'created_at DESC, saga_id',
};

export class FailedSagas1798850000000 implements MigrationInterface {
  name = 'FailedSagas1798850000000';

  async up(q: QueryRunner): Promise<void> {
    await createKeptSubset(q, FAILED_SAGAS);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropKeptSubset(q, FAILED_SAGAS);
  }
}
