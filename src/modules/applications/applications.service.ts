import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '../../domain/shared/domain-error';
import { SecretHasher } from '../../infrastructure/auth/secret-hasher';
import { returnedRows } from '../../infrastructure/database/query-result';
import { redirectUriOrigins } from '../../domain/applications/application-origins';
import { ClientSecretCheck } from './client-secret-check';

export interface Application {
  id: string;
  name: string;
  redirectUris: string[];
  /** Origins (`scheme://host[:port]`) the embedded connect flow may post its result to. */
  allowedOrigins: string[];
  sandbox: boolean;
}

export interface NewApplication {
  name: string;
  redirectUris: string[];
  /** Normalized origins (src/domain/applications/application-origins.ts); absent: the origins of the redirect URIs. */
  allowedOrigins?: string[];
  sandbox: boolean;
}

/** What can be changed on a registered application; absent fields stay as they are. */
export interface ApplicationChanges {
  name?: string;
  redirectUris?: string[];
  allowedOrigins?: string[];
}

/** An application as the CLI prints it (wire format); never the secret. */
export interface RegisteredApplication {
  client_id: string;
  name: string;
  redirect_uris: string[];
  allowed_origins: string[];
  sandbox: boolean;
}

export interface IssuedCredentials extends RegisteredApplication {
  client_secret: string;
}

interface ApplicationRow {
  id: string;
  name: string;
  secret_hash: string;
  redirect_uris: string[];
  allowed_origins: string[];
  sandbox: boolean;
}

const toApplication = (row: ApplicationRow): Application => ({
  id: row.id,
  name: row.name,
  redirectUris: row.redirect_uris,
  allowedOrigins: row.allowed_origins,
  sandbox: row.sandbox,
});

export const toRegisteredApplication = (application: Application): RegisteredApplication => ({
  client_id: application.id,
  name: application.name,
  redirect_uris: application.redirectUris,
  allowed_origins: application.allowedOrigins,
  sandbox: application.sandbox,
});

const originsFor = (input: NewApplication): string[] => input.allowedOrigins ?? redirectUriOrigins(input.redirectUris);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The nil UUID: never an application's (client ids are random v4 UUIDs). */
const NO_APPLICATION = '00000000-0000-0000-0000-000000000000';

export const invalidClientCredentials = () =>
  new DomainError('authentication_error', 'Invalid client_id or client_secret', { serviceCode: 'invalid_client' });

/** Registered applications (API clients) and the check of their credentials. */
@Injectable()
export class ApplicationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly hasher: SecretHasher,
    private readonly secrets: ClientSecretCheck,
  ) {}

  /** Registers an application; the secret is returned once and only its slow hash is kept. */
  async create(input: NewApplication): Promise<IssuedCredentials> {
    const clientId = randomUUID();
    const clientSecret = randomBytes(32).toString('base64url');
    const allowedOrigins = originsFor(input);
    await this.dataSource.query(
      `INSERT INTO applications (id, name, secret_hash, redirect_uris, allowed_origins, sandbox) VALUES ($1, $2, $3, $4, $5, $6)`,
      [clientId, input.name, await this.hasher.hash(clientSecret), input.redirectUris, allowedOrigins, input.sandbox],
    );
    return {
      client_id: clientId,
      client_secret: clientSecret,
      name: input.name,
      redirect_uris: input.redirectUris,
      allowed_origins: allowedOrigins,
      sandbox: input.sandbox,
    };
  }

  /** Changes a registered application; undefined when no application has that client_id. */
  async update(clientId: string, changes: ApplicationChanges): Promise<Application | undefined> {
    if (!UUID.test(clientId)) return undefined;
    const [row] = returnedRows<ApplicationRow>(
      await this.dataSource.query(
        `UPDATE applications SET name = coalesce($2, name), redirect_uris = coalesce($3, redirect_uris),
           allowed_origins = coalesce($4, allowed_origins), updated_at = now()
         WHERE id = $1 RETURNING *`,
        [clientId, changes.name ?? null, changes.redirectUris ?? null, changes.allowedOrigins ?? null],
      ),
    );
    return row ? toApplication(row) : undefined;
  }

  /** Creates or updates an application with given credentials; running it twice changes nothing. */
  async ensure(clientId: string, clientSecret: string, input: NewApplication): Promise<'created' | 'updated' | 'unchanged'> {
    const [existing] = await this.dataSource.query<ApplicationRow[]>(`SELECT * FROM applications WHERE id = $1`, [clientId]);
    const allowedOrigins = originsFor(input);
    if (!existing) {
      await this.dataSource.query(
        `INSERT INTO applications (id, name, secret_hash, redirect_uris, allowed_origins, sandbox) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO NOTHING`,
        [clientId, input.name, await this.hasher.hash(clientSecret), input.redirectUris, allowedOrigins, input.sandbox],
      );
      return 'created';
    }
    const sameSecret = await this.hasher.verify(existing.secret_hash, clientSecret);
    const same =
      sameSecret &&
      existing.name === input.name &&
      existing.sandbox === input.sandbox &&
      JSON.stringify(existing.redirect_uris) === JSON.stringify(input.redirectUris) &&
      JSON.stringify(existing.allowed_origins) === JSON.stringify(allowedOrigins);
    if (same) return 'unchanged';
    await this.dataSource.query(
      `UPDATE applications SET name = $2, secret_hash = $3, redirect_uris = $4, allowed_origins = $5, sandbox = $6, updated_at = now()
       WHERE id = $1`,
      [clientId, input.name, sameSecret ? existing.secret_hash : await this.hasher.hash(clientSecret), input.redirectUris, allowedOrigins, input.sandbox],
    );
    return 'updated';
  }

  async find(clientId: string): Promise<Application | undefined> {
    if (!UUID.test(clientId)) return undefined;
    const [row] = await this.dataSource.query<ApplicationRow[]>(`SELECT * FROM applications WHERE id = $1`, [clientId]);
    return row ? toApplication(row) : undefined;
  }

  async count(): Promise<number> {
    const [{ n }] = await this.dataSource.query(`SELECT count(*)::int AS n FROM applications`);
    return n;
  }

  /**
   * 401 for an unknown client or a wrong secret, with the same message and the same work either
   * way (one lookup, one slow verification: ClientSecretCheck); 429 once the client's address
   * (`from`, clientAddressOf) or the client_id has used up its failures.
   */
  async authenticate(clientId: string, clientSecret: string, from?: string): Promise<Application> {
    // A client_id that is not a UUID is looked up as one nobody has, so it costs what an unknown one does.
    const [row] = await this.dataSource.query<ApplicationRow[]>(`SELECT * FROM applications WHERE id = $1`, [
      UUID.test(clientId) ? clientId : NO_APPLICATION,
    ]);
    const stored = row && { id: row.id, secretHash: row.secret_hash };
    if (!(await this.secrets.matches(clientId, clientSecret, stored, from))) throw invalidClientCredentials();
    return toApplication(row);
  }
}
