import { AsyncLocalStorage } from 'node:async_hooks';
import { Global, Injectable, Module } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

interface Ambient {
  manager: EntityManager;
  /** Run once the outermost transaction has committed (never after a rollback). */
  afterCommit: (() => void)[];
  /** Values gathered during the transaction and written just before it commits (see `pending`). */
  pending: Map<object | symbol, { value: unknown; write: (value: unknown) => Promise<void> }>;
}

const scope = (manager: EntityManager): Ambient => ({ manager, afterCommit: [], pending: new Map() });

/** Writes what was gathered, in the order it was first asked for; a write may gather more. */
async function writePending(ambient: Ambient): Promise<void> {
  while (ambient.pending.size > 0) {
    const [key, { value, write }] = ambient.pending.entries().next().value!;
    ambient.pending.delete(key);
    await write(value);
  }
}

/**
 * The transaction a command writes in. A command run on its own opens one; a command run from
 * inside another unit of work (an HRIS event applied with its inbox row) joins that one, so the
 * event's effect, its saga state and its outbox rows commit together or not at all.
 */
@Injectable()
export class UnitOfWork {
  private readonly ambient = new AsyncLocalStorage<Ambient>();

  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in the ambient transaction when there is one, else in a new transaction. */
  async transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const current = this.ambient.getStore();
    if (current) return work(current.manager);
    let ambient: Ambient | undefined;
    const result = await this.dataSource.transaction((manager) => {
      ambient = scope(manager);
      return this.ambient.run(ambient, async () => {
        const answer = await work(manager);
        await writePending(ambient!);
        return answer;
      });
    });
    for (const effect of ambient!.afterCommit) effect();
    return result;
  }

  /**
   * Makes `manager`'s (open) transaction the ambient one while `work` runs; what `work` gathers
   * (`pending`) is written when it ends, since the commit is not this unit's to see.
   */
  join<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
    const current = this.ambient.getStore();
    if (current?.manager === manager) return work();
    const ambient = scope(manager);
    return this.ambient.run(ambient, async () => {
      const answer = await work();
      await writePending(ambient);
      return answer;
    });
  }

  /**
   * Runs `work` under a savepoint of the ambient transaction: when it throws, its writes, what
   * it gathered and its after-commit effects are all undone, and the error goes on; when it
   * succeeds, what it gathered is written before the savepoint is released.
   */
  async savepoint<T>(work: () => Promise<T>): Promise<T> {
    const parent = this.ambient.getStore();
    if (!parent) throw new Error('A savepoint needs a unit of work');
    const { manager } = parent;
    const child = scope(manager);
    await manager.query('SAVEPOINT unit_of_work');
    try {
      const answer = await this.ambient.run(child, async () => {
        const result = await work();
        await writePending(child);
        return result;
      });
      await manager.query('RELEASE SAVEPOINT unit_of_work');
      parent.afterCommit.push(...child.afterCommit);
      return answer;
    } catch (error) {
      // A rollback that fails leaves the transaction broken: its commit fails, with the cause below.
      try {
        await manager.query('ROLLBACK TO SAVEPOINT unit_of_work');
        await manager.query('RELEASE SAVEPOINT unit_of_work');
      } catch {
        // reported through the commit
      }
      throw error;
    }
  }

  /**
   * The value `key` names in the ambient transaction, made with `create` when first asked for;
   * `write` gets it just before the transaction commits (a savepoint's, before it is released).
   * Lets what a transaction moves be gathered from many places and written once, set-wise.
   */
  pending<T>(key: object | symbol, create: () => T, write: (value: T) => Promise<void>): T {
    const current = this.ambient.getStore();
    if (!current) throw new Error('Pending writes need a unit of work');
    const entry = current.pending.get(key);
    if (entry) return entry.value as T;
    const value = create();
    current.pending.set(key, { value, write: write as (value: unknown) => Promise<void> });
    return value;
  }

  /**
   * `effect` once the ambient transaction commits (at once outside one): wake-ups of workers
   * that should find the rows it wrote. Synchronous and not allowed to fail the commit.
   */
  afterCommit(effect: () => void): void {
    const current = this.ambient.getStore();
    if (current) current.afterCommit.push(effect);
    else effect();
  }

  /**
   * The manager reads should use: the ambient transaction's inside a unit of work (the embedded
   * database has one connection, so a read beside an open transaction would wait for ever).
   */
  get manager(): EntityManager {
    return this.ambient.getStore()?.manager ?? this.dataSource.manager;
  }

  /** True inside a unit of work: effects that must wait for the commit cannot run yet. */
  get inTransaction(): boolean {
    return this.ambient.getStore() !== undefined;
  }
}

@Global()
@Module({ providers: [UnitOfWork], exports: [UnitOfWork] })
export class UnitOfWorkModule {}
