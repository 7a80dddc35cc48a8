import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DEFAULT_RETRY_POLICY, RetryPolicy, retryPolicyForLatency } from '../../domain/jobs/job';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';

/**
 * The retry policy of work against a connection's provider, sized from its live latency (the
 * catalogue's, or PROVIDER_LATENCY_MS when set), each wait at most PROVIDER_RETRY_MAX_DELAY_MS.
 */
@Injectable()
export class ProviderRetryPolicies {
  /** By connection: a batch asks once per job, and a connection's provider does not change. */
  private readonly cache = new Map<string, Promise<RetryPolicy>>();

  constructor(
    private readonly connections: ConnectionsRepository,
    private readonly catalogue: ProviderCatalogue,
    private readonly config: AppConfig,
  ) {}

  forConnection(connectionId: string): Promise<RetryPolicy> {
    let policy = this.cache.get(connectionId);
    if (!policy) {
      policy = this.lookUp(connectionId).catch((error) => {
        this.cache.delete(connectionId);
        throw error;
      });
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(connectionId, policy);
    }
    return policy;
  }

  private async lookUp(connectionId: string): Promise<RetryPolicy> {
    const connection = await this.connections.find(connectionId);
    const provider = connection && this.catalogue.find(connection.providerId);
    if (!provider) return DEFAULT_RETRY_POLICY;
    const configured = this.config.PROVIDER_LATENCY_MS;
    const latency = configured === undefined ? provider.live_latency_ms : { min: configured, max: configured };
    return retryPolicyForLatency(latency, this.config.PROVIDER_RETRY_MAX_DELAY_MS);
  }
}
