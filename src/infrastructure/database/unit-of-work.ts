import { AsyncLocalStorage } from 'node:async_hooks';
import { Global, Injectable, Module } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

/**
 * The transaction a command writes in. A command run on its own opens one; a command run from
 * inside another unit of work (an HRIS event applied with its inbox row) joins that one, so the
 * event's effect, its saga state and its outbox rows commit together or not at all.
 */
@Injectable()
export class UnitOfWork {
  private readonly ambient = new AsyncLocalStorage<EntityManager>();

  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in the ambient transaction when there is one, else in a new transaction. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const current = this.ambient.getStore();
    if (current) return work(current);
    return this.dataSource.transaction((manager) => this.ambient.run(manager, () => work(manager)));
  }

  /** Makes `manager`'s (open) transaction the ambient one while `work` runs. */
  join<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
    return this.ambient.run(manager, work);
  }

  /**
   * The manager reads should use: the ambient transaction's inside a unit of work (the embedded
   * database has one connection, so a read beside an open transaction would wait for ever).
   */
  get manager(): EntityManager {
    return this.ambient.getStore() ?? this.dataSource.manager;
  }

  /** True inside a unit of work: effects that must wait for the commit cannot run yet. */
  get inTransaction(): boolean {
    return this.ambient.getStore() !== undefined;
  }
}

@Global()
@Module({ providers: [UnitOfWork], exports: [UnitOfWork] })
export class UnitOfWorkModule {}
