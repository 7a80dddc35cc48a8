import { ConnectionEntity } from './entity-scope';

export type ConnectionStatus = 'connected' | 'reauth' | 'disconnected';
export const CONNECTION_STATUSES: readonly ConnectionStatus[] = ['connected', 'reauth', 'disconnected'];

/** Sandbox mode of a connect session or connection, as clients of this API family send it. */
export type SandboxMode = 'finch' | 'provider';

export interface Connection {
  id: string;
  applicationId: string;
  customerId: string | null;
  customerName: string | null;
  customerEmail: string | null;
  providerId: string;
  authenticationType: string;
  accountId: string;
  companyId: string;
  products: string[];
  status: ConnectionStatus;
  sandbox: boolean;
  manual: boolean;
  employeeSize: number | null;
  createdAt: Date;
  entities: ConnectionEntity[];
}

/** What an access token grants: resolved once per request by the bearer guard. */
export interface Principal {
  tokenId: string;
  connection: Connection;
}
