import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { ApplicationsService, IssuedCredentials } from './applications.service';

/** What start-up did about applications; main.ts prints it for the newcomer. */
export interface StartupApplication {
  credentials: IssuedCredentials;
  source: 'settings' | 'demo';
}

/**
 * APP_CLIENT_ID/APP_CLIENT_SECRET/APP_REDIRECT_URIS create or update one application at start
 * (docker-compose, demos). On the embedded default with no application at all, a sandbox demo
 * application is created; its credentials are kept beside the embedded data (mode 0600) so
 * restarts show the same ones.
 */
@Injectable()
export class ApplicationsBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger(ApplicationsBootstrap.name);
  startupApplication?: StartupApplication;

  constructor(
    private readonly config: AppConfig,
    private readonly applications: ApplicationsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { APP_CLIENT_ID: clientId, APP_CLIENT_SECRET: clientSecret } = this.config;
    if (clientId && clientSecret) {
      const input = { name: 'Configured application', redirectUris: this.config.appRedirectUris, sandbox: this.config.APP_SANDBOX };
      const outcome = await this.applications.ensure(clientId, clientSecret, input);
      this.logger.log(`application ${clientId} from settings: ${outcome}`);
      this.startupApplication = {
        source: 'settings',
        credentials: { client_id: clientId, client_secret: clientSecret, name: input.name, redirect_uris: input.redirectUris, sandbox: input.sandbox },
      };
      return;
    }
    if (!this.config.embedded) return;
    const file = join(this.config.EMBEDDED_DATA_DIR, 'demo-application.json');
    if (existsSync(file)) {
      const stored = JSON.parse(readFileSync(file, 'utf8')) as IssuedCredentials;
      if (await this.applications.find(stored.client_id)) {
        this.startupApplication = { source: 'demo', credentials: stored };
        return;
      }
    }
    if ((await this.applications.count()) > 0) return;
    // No redirect URI: the demo runs the embedded flow, whose last page shows the code to
    // exchange, so a newcomer needs nothing listening on a callback URL.
    const credentials = await this.applications.create({ name: 'Sandbox demo application', redirectUris: [], sandbox: true });
    mkdirSync(this.config.EMBEDDED_DATA_DIR, { recursive: true });
    writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    this.startupApplication = { source: 'demo', credentials };
  }
}
