import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../../config/app-config';
import { SystemClock } from '../../../domain/shared/clock';
import { affectedCount } from '../../database/query-result';
import { ProviderBenefitLinks } from '../provider-benefit-links';
import { ProviderGrants } from '../provider-grants';
import { GrantLost, GustoAccess } from './gusto-access';
import { GustoHttp } from './gusto-http';
import { GustoOAuth } from './gusto-oauth';
import { GustoProviderAdapter } from './gusto-provider.adapter';
import { GustoRateLimiter } from './gusto-rate-limiter';

/** Where Gusto sends the employer back after its authorize page (the connect page's OAuth step). */
export const GUSTO_CALLBACK_PATH = '/connect/oauth/gusto/callback';

/** The Gusto API client of this process: one rate limiter for every grant it calls with. */
export function gustoHttpOf(config: AppConfig): GustoHttp {
  return new GustoHttp({ baseUrl: config.GUSTO_BASE_URL, apiVersion: config.GUSTO_API_VERSION, limiter: new GustoRateLimiter({ limit: config.GUSTO_REQUESTS_PER_MINUTE }) });
}

/** Gusto's OAuth endpoints for this application; `redirectUri` must be the one the authorize step sent. */
export function gustoOAuthOf(config: AppConfig, http: GustoHttp, redirectUri: string): GustoOAuth {
  return new GustoOAuth({ http, clientId: config.GUSTO_CLIENT_ID ?? '', clientSecret: config.GUSTO_CLIENT_SECRET ?? '', redirectUri });
}

/**
 * A grant Gusto refused for good (revoked, refresh token spent) puts its connection in `reauth`:
 * the connections' status trigger then sends `account.updated` to the application's webhooks, as
 * for any status change. Only a connected connection moves: a disconnected one stays so.
 */
export function connectionToReauth(dataSource: DataSource): GrantLost {
  const logger = new Logger('GustoGrants');
  return async (connectionId, reason) => {
    const moved = await dataSource.query(`UPDATE connections SET status = 'reauth', updated_at = now() WHERE id = $1 AND status = 'connected'`, [
      connectionId,
    ]);
    if (affectedCount(moved) > 0) logger.warn(`connection ${connectionId} needs reauthentication: Gusto refused its grant (${reason})`);
  };
}

/** The adapter for real Gusto connections; undefined while no Gusto application is configured. */
export function gustoProviderAdapterOf(
  config: AppConfig,
  grants: ProviderGrants,
  links: ProviderBenefitLinks,
  dataSource: DataSource,
): GustoProviderAdapter | undefined {
  if (!config.gustoConfigured) return undefined;
  const http = gustoHttpOf(config);
  // Refreshes send the registered callback address too, as Gusto's older guides ask, when it is
  // known; without PUBLIC_BASE_URL it depends on each request's host, and is left out.
  const refresher = gustoOAuthOf(config, http, config.PUBLIC_BASE_URL ? `${config.PUBLIC_BASE_URL.replace(/\/+$/, '')}${GUSTO_CALLBACK_PATH}` : '');
  const clock = new SystemClock();
  const access = new GustoAccess(grants, refresher, clock, connectionToReauth(dataSource));
  return new GustoProviderAdapter(http, access, links, { clock });
}
