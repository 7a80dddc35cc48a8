import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '../../domain/shared/domain-error';
import { SecretHasher } from '../../infrastructure/auth/secret-hasher';

export interface Application {
  id: string;
  name: string;
  redirectUris: string[];
  sandbox: boolean;
}

export interface NewApplication {
  name: string;
  redirectUris: string[];
  sandbox: boolean;
}

export interface IssuedCredentials {
  client_id: string;
  client_secret: string;
  name: string;
  redirect_uris: string[];
  sandbox: boolean;
}

interface ApplicationRow {
  id: string;
  name: string;
  secret_hash: string;
  redirect_uris: string[];
  sandbox: boolean;
}

const toApplication = (row: ApplicationRow): Application => ({
  id: row.id,
  name: row.name,
  redirectUris: row.redirect_uris,
  sandbox: row.sandbox,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const invalidClientCredentials = () =>
  new DomainError('authentication_error', 'Invalid client_id or client_secret', { serviceCode: 'invalid_client' });

/** Registered applications (API clients) and the check of their credentials. */
@Injectable()
export class ApplicationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly hasher: SecretHasher,
  ) {}

  /** Registers an application; the secret is returned once and only its slow hash is kept. */
  async create(input: NewApplication): Promise<IssuedCredentials> {
    const clientId = randomUUID();
    const clientSecret = randomBytes(32).toString('base64url');
    await this.dataSource.query(
      `INSERT INTO applications (id, name, secret_hash, redirect_uris, sandbox) VALUES ($1, $2, $3, $4, $5)`,
      [clientId, input.name, await this.hasher.hash(clientSecret), input.redirectUris, input.sandbox],
    );
    return { client_id: clientId, client_secret: clientSecret, name: input.name, redirect_uris: input.redirectUris, sandbox: input.sandbox };
  }

  /** Creates or updates an application with given credentials; running it twice changes nothing. */
  async ensure(clientId: string, clientSecret: string, input: NewApplication): Promise<'created' | 'updated' | 'unchanged'> {
    const [existing] = await this.dataSource.query<ApplicationRow[]>(`SELECT * FROM applications WHERE id = $1`, [clientId]);
    if (!existing) {
      await this.dataSource.query(
        `INSERT INTO applications (id, name, secret_hash, redirect_uris, sandbox) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (id) DO NOTHING`,
        [clientId, input.name, await this.hasher.hash(clientSecret), input.redirectUris, input.sandbox],
      );
      return 'created';
    }
    const sameSecret = await this.hasher.verify(existing.secret_hash, clientSecret);
    const same =
      sameSecret &&
      existing.name === input.name &&
      existing.sandbox === input.sandbox &&
      JSON.stringify(existing.redirect_uris) === JSON.stringify(input.redirectUris);
    if (same) return 'unchanged';
    await this.dataSource.query(
      `UPDATE applications SET name = $2, secret_hash = $3, redirect_uris = $4, sandbox = $5, updated_at = now() WHERE id = $1`,
      [clientId, input.name, sameSecret ? existing.secret_hash : await this.hasher.hash(clientSecret), input.redirectUris, input.sandbox],
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

  /** 401 for an unknown client or a wrong secret, with the same message either way. */
  async authenticate(clientId: string, clientSecret: string): Promise<Application> {
    const [row] = UUID.test(clientId)
      ? await this.dataSource.query<ApplicationRow[]>(`SELECT * FROM applications WHERE id = $1`, [clientId])
      : [];
    if (!row || !(await this.hasher.verify(row.secret_hash, clientSecret))) throw invalidClientCredentials();
    return toApplication(row);
  }
}
