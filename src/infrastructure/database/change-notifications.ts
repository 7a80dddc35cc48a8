import { randomUUID } from 'node:crypto';
import { Global, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';

/** The channels the database's triggers notify (migration 1797200000000). */
export type ChangeChannel = 'auth_changed' | 'employer_sync';
const CHANNELS: readonly ChangeChannel[] = ['auth_changed', 'employer_sync'];
/** Where an instance notifies itself to learn that it has heard everything committed before (`caughtUp`). */
const BARRIER_CHANNEL = 'change_barrier';
/** Longest `caughtUp` waits for its own notification before it drops every cache instead. */
const BARRIER_TIMEOUT_MS = 2_000;

type Listener = (payload: string) => void;

/**
 * One dedicated PostgreSQL session per instance that LISTENs to the change channels, so
 * in-memory caches learn of a revoked token or a new sync generation when the change commits,
 * on every instance. While the session is down (a restart, a network cut), `live` is false and
 * the caches are bypassed; when it is back, every cache is cleared (`onReset`), since
 * notifications sent meanwhile were lost. The embedded database has a single connection, and
 * one process: no session is opened there and `live` stays false.
 */
@Injectable()
export class ChangeNotifications implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ChangeNotifications.name);
  private readonly listeners = new Map<ChangeChannel, Set<Listener>>();
  private readonly resets = new Set<() => void>();
  private client: Client | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private isLive = false;
  private readonly instance = randomUUID();
  private barriers = 0;
  private readonly awaited = new Map<string, () => void>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** Whether notifications arrive now: caches may answer only then. */
  get live(): boolean {
    return this.isLive;
  }

  on(channel: ChangeChannel, listener: Listener): void {
    const set = this.listeners.get(channel) ?? new Set();
    set.add(listener);
    this.listeners.set(channel, set);
  }

  /**
   * Resolves once this instance has heard every change committed before the call, so the
   * request that made a change (a disconnect, a revocation) answers only when this instance's
   * caches no longer hold what it changed: read-your-writes on the instance. PostgreSQL delivers
   * notifications in commit order, so hearing a notification sent after the change commits
   * means the change's was heard. Should it not come in time, every cache is dropped instead.
   */
  async caughtUp(): Promise<void> {
    if (!this.isLive) return;
    const key = `${this.instance}:${++this.barriers}`;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => {
      this.awaited.set(key, () => resolve(true));
      timer = setTimeout(() => resolve(false), BARRIER_TIMEOUT_MS);
    });
    try {
      await this.dataSource.query(`SELECT pg_notify('${BARRIER_CHANNEL}', $1)`, [key]);
      if (!(await heard)) this.reset();
    } catch {
      this.reset();
    } finally {
      clearTimeout(timer);
      this.awaited.delete(key);
    }
  }

  /** Called whenever notifications may have been missed: drop everything cached. */
  onReset(listener: () => void): void {
    this.resets.add(listener);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.embedded) return;
    await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.goDown();
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // A session of its own on the database itself: a transaction pooler would not keep the LISTEN.
    const url = this.config.databaseSessionUrl ?? (this.dataSource.options as { url?: string }).url;
    const client = new Client({ connectionString: url, application_name: 'change-notifications' });
    client.on('notification', ({ channel, payload }) => {
      if (channel === BARRIER_CHANNEL) return this.awaited.get(payload ?? '')?.();
      for (const listener of this.listeners.get(channel as ChangeChannel) ?? []) listener(payload ?? '');
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the session ended')));
    try {
      await client.connect();
      for (const channel of [...CHANNELS, BARRIER_CHANNEL]) await client.query(`LISTEN ${channel}`);
      this.client = client;
      // Whatever changed before this session listened was not heard: start from nothing.
      this.reset();
      this.isLive = true;
    } catch (error) {
      await client.end().catch(() => undefined);
      this.lost(client, error as Error);
    }
  }

  private lost(client: Client, error: Error): void {
    if (this.client && this.client !== client) return;
    this.goDown();
    this.client = undefined;
    if (this.stopped || this.retry) return;
    this.logger.warn(`listening for change notifications failed (${error.message}); caches are bypassed until it is back`);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, 1_000);
  }

  private goDown(): void {
    this.isLive = false;
    this.reset();
    // Caches are bypassed while down: whoever waits to be caught up is.
    for (const release of this.awaited.values()) release();
  }

  private reset(): void {
    for (const listener of this.resets) listener();
  }
}

@Global()
@Module({ providers: [ChangeNotifications], exports: [ChangeNotifications] })
export class ChangeNotificationsModule {}
