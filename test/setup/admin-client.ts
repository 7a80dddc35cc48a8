import { Client } from 'pg';

/** Runs `work` in a session of its own on the database at `url`, closed after it. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Runs one statement on the server's maintenance database. */
export function withAdminClient<T>(serverUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const url = new URL(serverUrl);
  url.pathname = '/postgres';
  return withClient(url.toString(), work);
}

export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export const templateDatabaseName = (runId: string) => `bo_t_${runId}_template`;
