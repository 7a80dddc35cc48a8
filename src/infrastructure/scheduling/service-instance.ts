import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { GoneInstance, InstanceIdentity, PastInstances, ServiceInstancesRepository } from './service-instances.repository';

export interface ServiceInstanceSettings {
  /** The same across this instance's restarts (INSTANCE_ID). */
  name: string;
  /** How often the instance records that it is alive and looks for instances that stopped. */
  heartbeatMs: number;
  /** An instance silent this long is gone: the leases it held are freed. */
  deadAfterMs: number;
  /** No other process uses the database (the embedded one): every instance registered before is this one's past. */
  soleUser: boolean;
}

export const SERVICE_INSTANCE_SETTINGS = Symbol('ServiceInstanceSettings');

/** Leases of one kind, recorded with their holder's instance id. */
export interface HeldLeases {
  /** What they are, for the log: `job leases`, `outbox lanes`. */
  readonly what: string;
  /** Frees at once the leases these holders left, in the caller's transaction; answers how many. */
  release(holders: readonly string[], manager: EntityManager): Promise<number>;
  /** Told once freed leases are committed, so their work is taken up without waiting for a poll. */
  onFreed?(): void;
}

interface Freed {
  leases: HeldLeases;
  count: number;
}

/**
 * This process as the other instances see it: a row in `service_instances` whose heartbeat says
 * it is alive, and the id its leases record. At start it frees what its predecessors held (a
 * process killed before this one started under the same name) and what instances silent for
 * the dead bound held; then every beat looks for instances that stopped, so their work resumes
 * within about that bound rather than when their leases run out. A graceful stop removes the
 * row, once the lease holders have stopped (they stop before the application shuts down).
 */
@Injectable()
export class ServiceInstance implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ServiceInstance.name);
  readonly identity: InstanceIdentity;
  private readonly held: HeldLeases[] = [];
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  private running = false;
  /** Since when (process time) every beat has succeeded; undefined after one failed. */
  private healthySince: number | undefined;

  constructor(
    private readonly instances: ServiceInstancesRepository,
    @Inject(SERVICE_INSTANCE_SETTINGS) private readonly settings: ServiceInstanceSettings,
  ) {
    this.identity = { id: `${settings.name}/${randomUUID().slice(0, 8)}`, name: settings.name, host: hostname(), pid: process.pid };
  }

  /** What this process's leases record as their holder. */
  get id(): string {
    return this.identity.id;
  }

  /** Lease holders register when they are built, before the instance starts. */
  holdsLeases(leases: HeldLeases): void {
    this.held.push(leases);
  }

  onModuleInit(): Promise<void> {
    return this.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.stop();
  }

  /** Registers this process, frees what its predecessors and silent instances held, then beats. */
  async start(): Promise<void> {
    if (this.running) return;
    await this.instances.beat(this.identity);
    this.healthySince = Date.now();
    this.running = true;
    // Whoever ran before under this name is dead: this process is its replacement.
    await this.sweep(this.settings.soleUser ? { kind: 'all' } : { kind: 'named', name: this.settings.name });
    this.schedule();
  }

  /** Stops beating, then removes the row and frees whatever this process still holds. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    await this.beating;
    try {
      const freed = await this.instances.remove(this.id, (manager) => this.releaseAll([this.id], manager));
      if (freed.length > 0) this.logger.warn(`stopping: freed ${describe(freed)} still held`);
    } catch (error) {
      this.logger.warn(
        `removing this instance's row failed (${(error as Error).message}); other instances free its leases once it has been silent for ${this.settings.deadAfterMs} ms`,
      );
    }
  }

  /** One heartbeat, then a look for instances that stopped beating. Never throws: a failed beat is tried again at the next. */
  async beat(): Promise<void> {
    try {
      if (await this.instances.beat(this.identity)) {
        this.logger.warn(
          `this instance's row was gone (taken for gone after ${this.settings.deadAfterMs} ms without a beat, or another process started as ${this.settings.name}); ` +
            'registered again: leases it held may have gone to other instances',
        );
      }
    } catch (error) {
      if (this.healthySince !== undefined) this.logger.warn(`heartbeat failed: ${(error as Error).message}`);
      this.healthySince = undefined;
      return;
    }
    const now = Date.now();
    if (this.healthySince === undefined) {
      this.healthySince = now;
      this.logger.log('heartbeat recovered');
    }
    // A failed beat may have failed everywhere (the database was away): others are judged only
    // once this one has beaten for a whole bound again, which gives them as long to come back.
    if (now - this.healthySince < this.settings.deadAfterMs) return;
    await this.sweep({ kind: 'silent_only' }).catch((error) => this.logger.warn(`looking for gone instances failed: ${(error as Error).message}`));
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        if (this.running) this.schedule();
      });
    }, this.settings.heartbeatMs);
    // The HTTP server keeps the process alive; the heartbeat alone must not.
    this.timer.unref();
  }

  private async sweep(past: PastInstances): Promise<void> {
    const { gone, released } = await this.instances.removeGone(this.id, this.settings.deadAfterMs, past, (rows: GoneInstance[], manager) =>
      this.releaseAll(
        rows.map((r) => r.id),
        manager,
      ),
    );
    if (gone.length === 0) return;
    const freed = released ?? [];
    for (const { leases } of freed) leases.onFreed?.();
    const whom = gone.map((g) => `${g.id} (last beat ${new Date(g.heartbeat_at).toISOString()})`).join(', ');
    this.logger.warn(`instances gone: ${whom}; ${freed.length === 0 ? 'they held no leases' : `freed ${describe(freed)}`}`);
  }

  private async releaseAll(holders: string[], manager: EntityManager): Promise<Freed[]> {
    const freed: Freed[] = [];
    for (const leases of this.held) {
      const count = await leases.release(holders, manager);
      if (count > 0) freed.push({ leases, count });
    }
    return freed;
  }
}

function describe(freed: Freed[]): string {
  return freed.map((f) => `${f.count} ${f.leases.what}`).join(', ');
}
