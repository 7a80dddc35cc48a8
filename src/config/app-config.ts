import { isIP } from 'node:net';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  validateSync,
} from 'class-validator';
import { ORIGIN_FORM, parseOrigins } from '../domain/applications/application-origins';
import { DEFAULT_PROVIDER_RETRY_MAX_DELAY_MS } from '../domain/jobs/job';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const TABLE_UPKEEP_MODES = ['auto', 'on', 'off'] as const;
/** `auto` runs the table upkeep only where the server's autovacuum is off. */
export type TableUpkeepMode = (typeof TABLE_UPKEEP_MODES)[number];

const toInt = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^-?\d+$/.test(String(value)) ? Number(value) : value;
const toNumber = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^\d+(\.\d+)?$/.test(String(value)) ? Number(value) : value;
const toBool = ({ value }: { value: unknown }) => {
  if (value === undefined || value === '') return undefined;
  const text = String(value).toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'false', 'no', 'off'].includes(text)) return false;
  return value;
};
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);
const splitList = (value: string) => value.split(',').map((item) => item.trim()).filter((item) => item !== '');

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const TRUST_PROXY_MESSAGE =
  'TRUST_PROXY must be true, false, a number of proxy hops (0-10), or a comma-separated list of addresses, CIDR ranges and the names loopback, linklocal, uniquelocal';

/** Whether `value` is one of the TRUST_PROXY forms (see TRUST_PROXY_MESSAGE). */
function isTrustProxy(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 1000) return false;
  if (/^(true|false|\d|10)$/.test(value)) return true;
  return value.split(',').every((part) => {
    const item = part.trim();
    if (PROXY_NAMES.includes(item)) return true;
    const [address, bits, extra] = item.split('/');
    const version = isIP(address);
    if (version === 0 || extra !== undefined) return false;
    return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
  });
}

/** TRUST_PROXY as Fastify's `trustProxy` option takes it. */
export function trustProxyOption(value: string): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/** Configs loaded for command-line tools, which serve no dashboard and so need no ops credentials. */
const TOOL_CONFIGS = new WeakSet<object>();

/**
 * Every setting the service reads, validated once at start. Nothing else reads process.env.
 * Names are the environment variable names, so a message names exactly what to fix.
 */
export class AppConfig {
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  /** Base URL clients reach the service at; used for job_url, connect_url and printed links. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'PUBLIC_BASE_URL must be an http(s) URL' })
  PUBLIC_BASE_URL?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'DATABASE_URL must be a postgres:// URL, e.g. postgres://postgres@127.0.0.1:5432/benefits',
  })
  DATABASE_URL?: string;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE = 10;

  /**
   * How long a pooled connection may sit idle before it is closed; 0 keeps it until the service
   * stops. Long by default: a new connection is a new PostgreSQL backend, which loads its caches
   * and prepares and plans each statement again, so closing the pool's connections between
   * bursts of events (a payroll run, a nightly sync) made every burst pay for that once per
   * connection (the client library closes them after 10 s of idleness unless told otherwise).
   */
  @Transform(toInt)
  @IsInt({ message: 'DATABASE_POOL_IDLE_TIMEOUT_MS must be a whole number of milliseconds from 0 to 86400000' })
  @Min(0, { message: 'DATABASE_POOL_IDLE_TIMEOUT_MS must be a whole number of milliseconds from 0 to 86400000' })
  @Max(86_400_000, { message: 'DATABASE_POOL_IDLE_TIMEOUT_MS must be a whole number of milliseconds from 0 to 86400000' })
  DATABASE_POOL_IDLE_TIMEOUT_MS = 300_000;

  /**
   * A connection to the database itself, for what needs a session of its own: the LISTEN of
   * change notifications, the migrations' lock, the table upkeep's VACUUM settings. Set it when
   * DATABASE_URL goes through a connection pooler in transaction mode (PgBouncer, a managed
   * proxy), which hands each transaction whatever server connection is free and so keeps
   * nothing of a session. Unset: DATABASE_URL serves for both.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/\S+$/, {
    message: 'DATABASE_DIRECT_URL must be a postgres:// URL to the database itself, not through a pooler',
  })
  // Alone it would be ignored (the embedded database runs instead): a half-made setup is refused.
  @ValidateBy({
    name: 'directUrlWithDatabaseUrl',
    validator: {
      validate: (_value: unknown, args) => (args?.object as AppConfig).DATABASE_URL !== undefined,
      defaultMessage: () => 'DATABASE_DIRECT_URL is set without DATABASE_URL: set DATABASE_URL too (the pooled URL), or unset DATABASE_DIRECT_URL to run on the embedded database',
    },
  })
  DATABASE_DIRECT_URL?: string;

  /**
   * Parameterised statements run as prepared statements, parsed and planned once per
   * connection. Default: on, except when DATABASE_DIRECT_URL is set (DATABASE_URL is then a
   * pooler in transaction mode, which cannot keep them; PgBouncer 1.21+ with
   * max_prepared_statements can, and then this may be turned on).
   */
  @Transform(toBool)
  @IsOptional()
  @IsBoolean({ message: 'DATABASE_PREPARED_STATEMENTS must be true or false' })
  DATABASE_PREPARED_STATEMENTS?: boolean;

  /**
   * Who vacuums and analyzes the tables: `auto` leaves it to PostgreSQL's autovacuum and takes
   * it on, by autovacuum's thresholds, only where the server has `autovacuum = off`; `on`
   * always, `off` never. Except with `off`, a table that outgrew its statistics (about each
   * doubling) is also analyzed within a second (TableUpkeep).
   */
  @IsIn(TABLE_UPKEEP_MODES, { message: `DATABASE_TABLE_UPKEEP must be one of ${TABLE_UPKEEP_MODES.join(', ')}` })
  DATABASE_TABLE_UPKEEP: TableUpkeepMode = 'auto';

  /** How often the table upkeep does autovacuum's work where it does it. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  DATABASE_TABLE_UPKEEP_INTERVAL_MS = 30_000;

  /**
   * Days ahead of today the history tables (inbox, outbox, webhook deliveries and attempts, ops
   * audit) have their daily partitions made (PartitionUpkeep); a row no partition covers goes to
   * the table's DEFAULT partition until the upkeep moves it.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(60)
  DATABASE_PARTITION_DAYS_AHEAD = 3;

  /** How often the partition upkeep makes the days ahead and drops the days past retention. */
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  DATABASE_PARTITION_UPKEEP_INTERVAL_MS = 3_600_000;

  /** Where the embedded database keeps its files when DATABASE_URL is unset. */
  @IsString()
  @MinLength(1)
  EMBEDDED_DATA_DIR = '.data';

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/, {
    message: 'KAFKA_BROKERS must be a comma-separated list of host:port, e.g. 127.0.0.1:9092',
  })
  KAFKA_BROKERS?: string;

  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,100}$/, { message: 'KAFKA_CLIENT_ID may hold letters, digits, ".", "_" and "-"' })
  KAFKA_CLIENT_ID = 'benefits-orchestrator';

  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,100}$/, { message: 'KAFKA_GROUP_ID may hold letters, digits, ".", "_" and "-"' })
  KAFKA_GROUP_ID = 'benefits-orchestrator';

  /** Prefixes every topic name; lets several environments (or test runs) share one broker. */
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{0,100}$/, { message: 'KAFKA_TOPIC_PREFIX may hold letters, digits, ".", "_" and "-"' })
  KAFKA_TOPIC_PREFIX = '';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  KAFKA_TOPIC_PARTITIONS = 6;

  /**
   * Replicas of each topic the service creates. Unset: 3 when the cluster has three brokers or
   * more, else 1. Topics that exist are left as they are (a warning names one with fewer).
   */
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsOptional()
  @IsInt({ message: 'KAFKA_REPLICATION_FACTOR must be a whole number from 1 to 15' })
  @Min(1, { message: 'KAFKA_REPLICATION_FACTOR must be a whole number from 1 to 15' })
  @Max(15, { message: 'KAFKA_REPLICATION_FACTOR must be a whole number from 1 to 15' })
  KAFKA_REPLICATION_FACTOR?: number;

  /**
   * `min.insync.replicas` of the topics the service creates: with `acks=all`, a write needs this
   * many replicas in sync. Unset: 2 when replicated 3 times or more, else 1.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsOptional()
  @IsInt({ message: 'KAFKA_MIN_INSYNC_REPLICAS must be a whole number from 1 to 15' })
  @Min(1, { message: 'KAFKA_MIN_INSYNC_REPLICAS must be a whole number from 1 to 15' })
  @Max(15, { message: 'KAFKA_MIN_INSYNC_REPLICAS must be a whole number from 1 to 15' })
  KAFKA_MIN_INSYNC_REPLICAS?: number;

  /**
   * Consecutive messages of a partition the consumer applies in one transaction, set-wise (a
   * few statements per table for the whole run; 1: one transaction per message). Larger
   * batches cost less per message but hold their locks longer.
   */
  @Transform(toInt)
  @IsInt({ message: 'KAFKA_BATCH_MAX must be a whole number from 1 to 5000' })
  @Min(1, { message: 'KAFKA_BATCH_MAX must be a whole number from 1 to 5000' })
  @Max(5000, { message: 'KAFKA_BATCH_MAX must be a whole number from 1 to 5000' })
  KAFKA_BATCH_MAX = 500;

  /**
   * Kafka's `fetch.min.bytes` for the consumer: a broker answers a fetch once this much is
   * waiting on the partitions it leads, or after KAFKA_FETCH_MAX_WAIT_MS. Behind, a fetch fills
   * at once; keeping up, each fetch collects what arrives in the wait, so a transaction applies
   * more messages for its fixed cost (statements, commit, the jobs a batch opens) at the price of
   * that much latency. 1: answer as soon as anything is there.
   */
  @Transform(toInt)
  @IsInt({ message: 'KAFKA_FETCH_MIN_BYTES must be a whole number of bytes from 1 to 10485760' })
  @Min(1, { message: 'KAFKA_FETCH_MIN_BYTES must be a whole number of bytes from 1 to 10485760' })
  @Max(10_485_760, { message: 'KAFKA_FETCH_MIN_BYTES must be a whole number of bytes from 1 to 10485760' })
  KAFKA_FETCH_MIN_BYTES = 1_048_576;

  /**
   * Kafka's `fetch.max.wait.ms`: the longest a broker holds a fetch for KAFKA_FETCH_MIN_BYTES to
   * arrive, so the most an event waits for company before it is applied.
   */
  @Transform(toInt)
  @IsInt({ message: 'KAFKA_FETCH_MAX_WAIT_MS must be a whole number of milliseconds from 0 to 5000' })
  @Min(0, { message: 'KAFKA_FETCH_MAX_WAIT_MS must be a whole number of milliseconds from 0 to 5000' })
  @Max(5_000, { message: 'KAFKA_FETCH_MAX_WAIT_MS must be a whole number of milliseconds from 0 to 5000' })
  KAFKA_FETCH_MAX_WAIT_MS = 100;

  /**
   * How long the consumer group waits for a member that stopped answering (a killed process)
   * before its partitions go to the others. The broker bounds it (group.min/max.session.timeout.ms,
   * 6 s to 30 min by default).
   */
  @Transform(toInt)
  @IsInt({ message: 'KAFKA_SESSION_TIMEOUT_MS must be a whole number of milliseconds from 6000 to 1800000' })
  @Min(6_000, { message: 'KAFKA_SESSION_TIMEOUT_MS must be a whole number of milliseconds from 6000 to 1800000' })
  @Max(1_800_000, { message: 'KAFKA_SESSION_TIMEOUT_MS must be a whole number of milliseconds from 6000 to 1800000' })
  KAFKA_SESSION_TIMEOUT_MS = 30_000;

  /**
   * Wrong ops credentials one client address may send per window before it is refused (429);
   * one username may get three times as many, from all addresses together.
   */
  @Transform(toInt)
  @IsInt({ message: 'OPS_SIGN_IN_MAX_FAILURES must be a whole number from 1 to 1000' })
  @Min(1, { message: 'OPS_SIGN_IN_MAX_FAILURES must be a whole number from 1 to 1000' })
  @Max(1000, { message: 'OPS_SIGN_IN_MAX_FAILURES must be a whole number from 1 to 1000' })
  OPS_SIGN_IN_MAX_FAILURES = 10;

  /** The window of those failures, from the first; a refused address waits for its end. */
  @Transform(toInt)
  @IsInt({ message: 'OPS_SIGN_IN_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400' })
  @Min(1, { message: 'OPS_SIGN_IN_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400' })
  @Max(86_400, { message: 'OPS_SIGN_IN_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400' })
  OPS_SIGN_IN_LOCKOUT_SECONDS = 900;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9._@-]{1,100}$/, { message: 'OPS_USERNAME may hold letters, digits, ".", "_", "@" and "-"' })
  OPS_USERNAME?: string;

  /** Required outside the embedded default: the dashboard never runs without credentials. */
  @Transform(emptyToUndefined)
  @ValidateIf((c: AppConfig) => (c.DATABASE_URL !== undefined && !TOOL_CONFIGS.has(c)) || c.OPS_PASSWORD !== undefined)
  @IsString({ message: 'OPS_PASSWORD is required when DATABASE_URL is set (the ops dashboard needs credentials)' })
  @MinLength(12, { message: 'OPS_PASSWORD must be at least 12 characters' })
  @MaxLength(200)
  OPS_PASSWORD?: string;

  /** An application created or updated at start (docker-compose, demos); all three go together. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i, {
    message: 'APP_CLIENT_ID must be a UUID v4',
  })
  APP_CLIENT_ID?: string;

  @Transform(emptyToUndefined)
  @ValidateIf((c: AppConfig) => c.APP_CLIENT_ID !== undefined || c.APP_CLIENT_SECRET !== undefined)
  @IsString({ message: 'APP_CLIENT_SECRET is required with APP_CLIENT_ID' })
  @MinLength(16, { message: 'APP_CLIENT_SECRET must be at least 16 characters' })
  @MaxLength(200)
  APP_CLIENT_SECRET?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^https?:\/\/[^\s,]+(,https?:\/\/[^\s,]+)*$/, {
    message: 'APP_REDIRECT_URIS must be a comma-separated list of http(s) URLs',
  })
  APP_REDIRECT_URIS?: string;

  /** Origins the embedded connect flow may post to; unset, the origins of APP_REDIRECT_URIS. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @ValidateBy({
    name: 'isOriginList',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string') return false;
        const { origins, problems } = parseOrigins(splitList(value));
        return origins.length > 0 && problems.length === 0;
      },
      defaultMessage: (args) => {
        const value: unknown = args?.value;
        const problems = typeof value === 'string' ? parseOrigins(splitList(value)).problems : [];
        return `APP_ORIGINS must be a comma-separated list of origins (${ORIGIN_FORM})${problems.length > 0 ? `: ${problems.join('; ')}` : ''}`;
      },
    },
  })
  APP_ORIGINS?: string;

  @Transform(toBool)
  @IsBoolean({ message: 'APP_SANDBOX must be true or false' })
  APP_SANDBOX = true;

  /**
   * Key that signs the connect page's step-to-step state. Instances behind one address must
   * share it; unset, each process draws a random one (a restart sends people mid-flow back to
   * the start of their link).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'CONNECT_PAGE_SIGNING_KEY must be at least 32 characters' })
  @MaxLength(500)
  CONNECT_PAGE_SIGNING_KEY?: string;

  /** Requests per minute one access token may make; over it, 429 with Retry-After. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  RATE_LIMIT_PER_MINUTE = 1200;

  /** Megabytes of synced read answers kept in memory per instance (0: no cache; ETags still answer 304). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(4_096)
  READ_CACHE_MB = 32;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel = 'info';

  @Transform(toBool)
  @IsBoolean({ message: 'LOG_PRETTY must be true or false' })
  LOG_PRETTY = false;

  /**
   * Which peers' X-Forwarded-For is believed for the client's address (the one failed sign-ins
   * and client secrets are counted against): by default none, so each client is counted by the
   * address it connects from. Behind a proxy, name it (`loopback` for one on this host, else
   * its addresses): any peer trusted here can pick the address it is counted as, so neither
   * loopback nor a private network is trusted unasked.
   */
  @ValidateBy({ name: 'isTrustProxy', validator: { validate: isTrustProxy, defaultMessage: () => TRUST_PROXY_MESSAGE } })
  TRUST_PROXY = 'false';

  // Limits on failed sign-ins beyond the ops address and username ones (issue 38, findings 3 and 4).
  /**
   * Key that signs the ops device tokens a successful ops sign-in hands out (they exempt that
   * device from the per-username limit). Instances behind one address must share it; unset,
   * each process draws a random one (after a restart a device signs in once more to be known).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'OPS_DEVICE_SIGNING_KEY must be at least 32 characters' })
  @MaxLength(500)
  OPS_DEVICE_SIGNING_KEY?: string;

  /**
   * Wrong client secrets one client address may send per window before it is refused (429);
   * one client_id may get three times as many, from all addresses together. A secret already
   * verified on this instance is never refused.
   */
  @Transform(toInt)
  @IsInt({ message: 'CLIENT_SECRET_MAX_FAILURES must be a whole number from 1 to 1000' })
  @Min(1, { message: 'CLIENT_SECRET_MAX_FAILURES must be a whole number from 1 to 1000' })
  @Max(1000, { message: 'CLIENT_SECRET_MAX_FAILURES must be a whole number from 1 to 1000' })
  CLIENT_SECRET_MAX_FAILURES = 20;

  /** The window of those failures, from the first; a refused address or client_id waits for its end. */
  @Transform(toInt)
  @IsInt({ message: 'CLIENT_SECRET_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400' })
  @Min(1, { message: 'CLIENT_SECRET_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400' })
  @Max(86_400, { message: 'CLIENT_SECRET_LOCKOUT_SECONDS must be a whole number of seconds from 1 to 86400' })
  CLIENT_SECRET_LOCKOUT_SECONDS = 900;

  /**
   * Heap that request bodies being parsed and handled may take at once, estimated from their
   * size and number of JSON values (each route's own limits are in body-limits.ts). Sized for
   * the heap `npm start` gives (256 MB): any one body fits alone; more wait for room.
   */
  @Transform(toInt)
  @IsInt({ message: 'BODY_BUDGET_MB must be a whole number of MiB from 8 to 4096' })
  @Min(8, { message: 'BODY_BUDGET_MB must be a whole number of MiB from 8 to 4096' })
  @Max(4_096, { message: 'BODY_BUDGET_MB must be a whole number of MiB from 8 to 4096' })
  BODY_BUDGET_MB = 40;

  /** How long a body may wait for room in that budget before it is refused with 429 and Retry-After. */
  @Transform(toInt)
  @IsInt({ message: 'BODY_WAIT_MS must be a whole number of milliseconds from 100 to 120000' })
  @Min(100, { message: 'BODY_WAIT_MS must be a whole number of milliseconds from 100 to 120000' })
  @Max(120_000, { message: 'BODY_WAIT_MS must be a whole number of milliseconds from 100 to 120000' })
  BODY_WAIT_MS = 10_000;

  /** The request line and headers must arrive within this, or the request is answered 408. */
  @Transform(toInt)
  @IsInt({ message: 'HTTP_HEADERS_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 600000' })
  @Min(1_000, { message: 'HTTP_HEADERS_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 600000' })
  @Max(600_000, { message: 'HTTP_HEADERS_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 600000' })
  HTTP_HEADERS_TIMEOUT_MS = 20_000;

  /** The whole request, body included, must arrive within this, or it is answered 408. */
  @Transform(toInt)
  @IsInt({ message: 'HTTP_REQUEST_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 600000' })
  @Min(1_000, { message: 'HTTP_REQUEST_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 600000' })
  @Max(600_000, { message: 'HTTP_REQUEST_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 600000' })
  HTTP_REQUEST_TIMEOUT_MS = 60_000;

  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(60_000)
  OUTBOX_POLL_MS = 250;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  OUTBOX_BATCH_SIZE = 500;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  OUTBOX_LEASE_MS = 30_000;

  /**
   * Days an inbox row (a consumed message id) is kept: the window in which a redelivered message
   * is recognised. At least as long as the topics' retention (Kafka's default: 7 days), or a
   * message replayed from the log after that would apply again.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  INBOX_RETENTION_DAYS = 7;

  /**
   * Days a published outbox message is kept (a day's partition is dropped once wholly older;
   * one with a message still pending is kept). The sandbox's HRIS events are deduplicated
   * against it, and the ops overview counts from it.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  OUTBOX_RETENTION_DAYS = 7;

  /** Days the ops audit trail is kept (a day's partition is dropped once wholly older). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(36_500)
  OPS_AUDIT_RETENTION_DAYS = 365;

  /** Whether this instance delivers webhooks (an instance that only serves reads may not). */
  @Transform(toBool)
  @IsBoolean({ message: 'WEBHOOK_DELIVERY must be true or false' })
  WEBHOOK_DELIVERY = true;

  /**
   * Key that encrypts webhook signing secrets at rest; every instance must share it. Unset with
   * the embedded database: one is generated into EMBEDDED_DATA_DIR. Unset with DATABASE_URL:
   * webhook endpoints cannot be created (a key only one instance knows would sign for it alone).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'WEBHOOK_SECRETS_KEY must be at least 32 characters' })
  @MaxLength(500)
  WEBHOOK_SECRETS_KEY?: string;

  /**
   * The Gusto application this service connects employers' Gusto companies through
   * (docs/providers/gusto.md). Both unset: real Gusto connections are not offered (sandbox
   * connections to `gusto` are simulated as ever).
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MaxLength(200)
  GUSTO_CLIENT_ID?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MaxLength(500)
  GUSTO_CLIENT_SECRET?: string;

  /** Gusto's API: its demo server by default (the document's first server); production is https://api.gusto.com. */
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'GUSTO_BASE_URL must be an http(s) URL' })
  GUSTO_BASE_URL = 'https://api.gusto-demo.com';

  /** Sent as X-Gusto-API-Version: the version of the document the adapter is built and tested against. */
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'GUSTO_API_VERSION must be a date like 2026-02-01' })
  GUSTO_API_VERSION = '2026-02-01';

  /**
   * Requests this instance sends Gusto per grant and rolling minute: Gusto allows 200
   * (docs/providers/gusto.md); 180 leaves room for calls in flight. Raise it only with a higher
   * limit granted by Gusto.
   */
  @Transform(toInt)
  @IsInt({ message: 'GUSTO_REQUESTS_PER_MINUTE must be a whole number from 1 to 100000' })
  @Min(1, { message: 'GUSTO_REQUESTS_PER_MINUTE must be a whole number from 1 to 100000' })
  @Max(100_000, { message: 'GUSTO_REQUESTS_PER_MINUTE must be a whole number from 1 to 100000' })
  GUSTO_REQUESTS_PER_MINUTE = 180;

  /** One delivery attempt, connect to the end of the answer; past it the attempt failed. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(60_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  /** Bytes of a receiver's answer read (and kept as the attempt's excerpt); the rest is dropped. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65_536)
  WEBHOOK_MAX_RESPONSE_BYTES = 2_048;

  /** Deliveries one instance has in flight at once, over all endpoints. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000)
  WEBHOOK_CONCURRENCY = 64;

  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(60_000)
  WEBHOOK_POLL_MS = 200;

  /** First retry delay; it doubles per attempt (with jitter) up to WEBHOOK_RETRY_MAX_DELAY_MS. */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(3_600_000)
  WEBHOOK_RETRY_BASE_MS = 5_000;

  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(86_400_000)
  WEBHOOK_RETRY_MAX_DELAY_MS = 6 * 3_600_000;

  /** How long after its event a delivery is still retried; then it is failed (Resend in the dashboard). */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(30 * 86_400_000)
  WEBHOOK_RETRY_WINDOW_MS = 3 * 86_400_000;

  /** An endpoint with no successful delivery for this long while failing is disabled. */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(90 * 86_400_000)
  WEBHOOK_DISABLE_AFTER_MS = 5 * 86_400_000;

  /**
   * Deliver to private, link-local and unique-local addresses (on-premises receivers). Off by
   * default: a URL must not reach into the service's own network. Loopback is allowed for
   * sandbox applications either way.
   */
  @Transform(toBool)
  @IsBoolean({ message: 'WEBHOOK_ALLOW_PRIVATE_ADDRESSES must be true or false' })
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES = false;

  /**
   * Days webhook deliveries (by creation) and their attempts are kept; a day's partition with a
   * delivery still pending is kept until it is not.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  WEBHOOK_RETENTION_DAYS = 30;

  // Idempotency-Key answers one application may keep (docs/decisions.md "Idempotency-Key"). An
  // application's allowance is counted per day from its first key, so at most twice it is live.
  /** An answer larger than this is sent but not kept: a retry with its key is told so (409), not run again. */
  @Transform(toInt)
  @IsInt()
  @Min(1_024)
  @Max(16_777_216)
  IDEMPOTENCY_MAX_ANSWER_BYTES = 65_536;

  /** Bytes of answers kept per application and day; past them answers are sent but not kept, as above. */
  @Transform(toInt)
  @IsInt()
  @Min(1_024)
  @Max(1_073_741_824)
  IDEMPOTENCY_ANSWER_BYTES_PER_APPLICATION = 8_388_608;

  /** Keys taken per application and day; past them a request with a new key is 429 with Retry-After. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  IDEMPOTENCY_KEYS_PER_APPLICATION = 20_000;

  /**
   * Latency of every live provider call, in ms. Unset: each provider's own range from the
   * catalogue (a few hundred ms), so live calls are visibly live. Tests set 0.
   */
  @Transform(({ value }) => (value === undefined || value === '' ? undefined : Number(value)))
  @IsOptional()
  @IsInt({ message: 'PROVIDER_LATENCY_MS must be a whole number of milliseconds' })
  @Min(0)
  @Max(600_000)
  PROVIDER_LATENCY_MS?: number;

  /**
   * The longest wait between two runs of a job against a provider (retries double from a first
   * wait sized by the provider's latency). Runs stop once the retry budget (ten minutes or
   * twenty of the provider's slowest calls) is spent, so a lower cap means more runs in it.
   */
  @Transform(toInt)
  @IsInt({ message: 'PROVIDER_RETRY_MAX_DELAY_MS must be a whole number of milliseconds' })
  @Min(100)
  @Max(3_600_000)
  PROVIDER_RETRY_MAX_DELAY_MS = DEFAULT_PROVIDER_RETRY_MAX_DELAY_MS;

  /**
   * Fault drills: the share (0–1) of live provider calls answered with a provider server
   * error (502 `provider_error`), and the share that time out (504) after PROVIDER_TIMEOUT_MS.
   * Both 0 in normal use.
   */
  @Transform(toNumber)
  @IsNumber({}, { message: 'PROVIDER_FAILURE_RATE must be a number from 0 to 1' })
  @Min(0)
  @Max(1)
  PROVIDER_FAILURE_RATE = 0;

  @Transform(toNumber)
  @IsNumber({}, { message: 'PROVIDER_TIMEOUT_RATE must be a number from 0 to 1' })
  @Min(0)
  @Max(1)
  PROVIDER_TIMEOUT_RATE = 0;

  /** How long a provider call that hangs is waited for before it is given up as timed out. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(600_000)
  PROVIDER_TIMEOUT_MS = 30_000;

  /**
   * The most individual changes one provider call carries when the due groups of a benefit are
   * folded together (a group is never split: a larger one goes alone). A failed call fails all
   * it carries, so this bounds what one failure puts back behind a retry.
   */
  @Transform(toInt)
  @IsInt({ message: 'PROVIDER_CALL_MAX_CHANGES must be a whole number from 1 to 100000' })
  @Min(1)
  @Max(100_000)
  PROVIDER_CALL_MAX_CHANGES = 1_000;

  /** Data syncs a connection may start per hour (fixed window): allowed_refreshes. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000)
  SANDBOX_REFRESHES_PER_HOUR = 10;

  /**
   * Sandbox edits on a synced entity start a data sync (outside the refresh quota), so synced
   * reads show them; false: they show after the next sync, as a real provider's changes do.
   */
  @Transform(toBool)
  @IsBoolean({ message: 'SANDBOX_EDIT_SYNCS must be true or false' })
  SANDBOX_EDIT_SYNCS = true;

  /**
   * How long a sandbox edit on a synced connection waits for the data sync it starts, so the
   * next read shows the edit; past it the edit answers with the sync still running. 0: no wait.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(120_000)
  SANDBOX_EDIT_SYNC_WAIT_MS = 10_000;

  /** How often job workers look for due jobs when idle. */
  @Transform(toInt)
  @IsInt()
  @Min(5)
  @Max(60_000)
  JOB_POLL_MS = 500;

  /**
   * How long a worker's lease on a job lasts unless renewed (every third of it, while the job
   * runs): the longest a job waits when its holder stops renewing without being taken for gone.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  JOB_LEASE_MS = 30_000;

  /**
   * This instance's name, the same across its restarts: a restarted process frees at once the
   * leases its killed predecessor held. Empty: the host name and PORT (a process on PORT 0 is a
   * new instance each time). Two running processes must never share one.
   */
  @IsString()
  @Matches(/^[A-Za-z0-9._:@-]{0,100}$/, { message: 'INSTANCE_ID may hold up to 100 letters, digits, ".", "_", ":", "@" and "-"' })
  INSTANCE_ID = '';

  /** How often an instance records that it is alive, and looks for instances that stopped. */
  @Transform(toInt)
  @IsInt({ message: 'INSTANCE_HEARTBEAT_MS must be a whole number of milliseconds from 50 to 60000' })
  @Min(50, { message: 'INSTANCE_HEARTBEAT_MS must be a whole number of milliseconds from 50 to 60000' })
  @Max(60_000, { message: 'INSTANCE_HEARTBEAT_MS must be a whole number of milliseconds from 50 to 60000' })
  INSTANCE_HEARTBEAT_MS = 2_000;

  /**
   * An instance without a heartbeat this long is gone (killed, its host lost): its leases are
   * freed at once. Three beats at least, so one late beat never makes a live instance gone.
   */
  @Transform(toInt)
  @IsInt({ message: 'INSTANCE_DEAD_AFTER_MS must be a whole number of milliseconds up to 3600000' })
  @Max(3_600_000, { message: 'INSTANCE_DEAD_AFTER_MS must be a whole number of milliseconds up to 3600000' })
  @ValidateBy({
    name: 'atLeastThreeHeartbeats',
    validator: {
      validate: (value: unknown, args) => typeof value === 'number' && value >= 3 * (args?.object as AppConfig).INSTANCE_HEARTBEAT_MS,
      defaultMessage: () => 'INSTANCE_DEAD_AFTER_MS must be at least three INSTANCE_HEARTBEAT_MS',
    },
  })
  INSTANCE_DEAD_AFTER_MS = 10_000;

  /** Runs the background workers (outbox relay, consumers) in this process. */
  @Transform(toBool)
  @IsBoolean({ message: 'WORKERS_ENABLED must be true or false' })
  WORKERS_ENABLED = true;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_TIMEOUT_MS = 15_000;

  /** Whether real Gusto connections can be made: both of the Gusto application's credentials are set. */
  get gustoConfigured(): boolean {
    return this.GUSTO_CLIENT_ID !== undefined && this.GUSTO_CLIENT_SECRET !== undefined;
  }

  get embedded(): boolean {
    return this.DATABASE_URL === undefined;
  }

  /** Where a session of its own is opened (LISTEN, session locks): the database itself. */
  get databaseSessionUrl(): string | undefined {
    return this.DATABASE_DIRECT_URL ?? this.DATABASE_URL;
  }

  /** Whether the pool's statements run prepared (DATABASE_PREPARED_STATEMENTS). */
  get preparedStatements(): boolean {
    return this.DATABASE_PREPARED_STATEMENTS ?? this.DATABASE_DIRECT_URL === undefined;
  }

  get appRedirectUris(): string[] {
    return this.APP_REDIRECT_URIS ? this.APP_REDIRECT_URIS.split(',') : [];
  }

  /** APP_ORIGINS normalized; undefined when unset (the application then gets its redirect URIs' origins). */
  get appOrigins(): string[] | undefined {
    return this.APP_ORIGINS === undefined ? undefined : parseOrigins(splitList(this.APP_ORIGINS)).origins;
  }

  get kafkaBrokers(): string[] {
    return this.KAFKA_BROKERS ? this.KAFKA_BROKERS.split(',') : [];
  }

  get kafkaEnabled(): boolean {
    return this.kafkaBrokers.length > 0;
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const KNOWN_KEYS = Object.keys(new AppConfig());

/** Reads the settings from an environment; throws ConfigError listing every bad setting. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<AppConfig> = {},
  { tool = false }: { tool?: boolean } = {},
): AppConfig {
  const raw: Record<string, unknown> = {};
  const optional = ['PUBLIC_BASE_URL', 'DATABASE_URL', 'DATABASE_DIRECT_URL', 'DATABASE_PREPARED_STATEMENTS', 'KAFKA_BROKERS', 'OPS_USERNAME', 'OPS_PASSWORD', 'APP_CLIENT_ID', 'APP_CLIENT_SECRET', 'APP_REDIRECT_URIS', 'APP_ORIGINS', 'CONNECT_PAGE_SIGNING_KEY', 'PROVIDER_LATENCY_MS', 'WEBHOOK_SECRETS_KEY', 'KAFKA_REPLICATION_FACTOR', 'KAFKA_MIN_INSYNC_REPLICAS', 'GUSTO_CLIENT_ID', 'GUSTO_CLIENT_SECRET'];
  for (const key of KNOWN_KEYS.concat(optional)) {
    if (env[key] !== undefined) raw[key] = env[key];
  }
  const config = plainToInstance(AppConfig, { ...raw, ...overrides });
  if (tool) TOOL_CONFIGS.add(config);
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length > 0) {
    // A setting with one message for its whole range fails several constraints with it: say it once.
    throw new ConfigError([
      ...new Set(
        errors.flatMap((e) => Object.values(e.constraints ?? {}).map((m) => (m.startsWith(e.property) ? m : `${e.property}: ${m}`))),
      ),
    ]);
  }
  return config;
}
