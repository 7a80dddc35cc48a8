import { EntityManager } from 'typeorm';

/** A connection whose live grant reaches a provider account, with what choosing its sync needs. */
export interface ConnectionOfAccount {
  connectionId: string;
  providerId: string;
  authenticationType: string;
  manual: boolean;
}

/**
 * The connected connections whose grant at `providerId` reaches `accountRef` (Gusto: the
 * company's uuid), in id order. Several applications may connect the same company, so there may
 * be several; a connection in `reauth` or `disconnected`, or whose grant was refused for good,
 * is left out (nothing could be read for it). With `lock`, their connection rows are locked (in
 * id order, so two callers never wait on each other crosswise), as a sync request locks them.
 * Beside ProviderGrants rather than in it: it reads no token, so it needs no sealing key.
 */
export async function connectionsOfAccount(
  manager: EntityManager,
  providerId: string,
  accountRef: string,
  { lock = false } = {},
): Promise<ConnectionOfAccount[]> {
  const rows: { id: string; provider_id: string; authentication_type: string; manual: boolean }[] = await manager.query(
    `SELECT c.id, c.provider_id, c.authentication_type, c.manual
     FROM provider_grants g
     JOIN connections c ON c.id = g.connection_id
     WHERE g.provider_id = $1 AND g.account_ref = $2 AND g.failure IS NULL AND c.status = 'connected'
     ORDER BY c.id
     ${lock ? 'FOR UPDATE OF c' : ''}`,
    [providerId, accountRef],
  );
  return rows.map((row) => ({ connectionId: row.id, providerId: row.provider_id, authenticationType: row.authentication_type, manual: row.manual }));
}
