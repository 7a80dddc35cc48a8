import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { redirectUriOrigins } from '../../domain/applications/application-origins';
import { ApplicationsService, IssuedCredentials } from './applications.service';

/** What start-up did about applications; main.ts prints it for the newcomer. */
export interface StartupApplication {
  credentials: IssuedCredentials;
  source: 'settings' | 'demo';
}

/**
 * APP_CLIENT_ID/APP_CLIENT_SECRET/APP_REDIRECT_URIS/APP_ORIGINS create or update one application
 * at start (docker-compose, demos). On the embedded default with no application at all, a
 * sandbox demo application is created; its credentials are kept beside the embedded data
 * (mode 0600) so restarts show the same ones.
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
      const redirectUris = this.config.appRedirectUris;
      const input = {
        name: 'Configured application',
        redirectUris,
        allowedOrigins: this.config.appOrigins ?? redirectUriOrigins(redirectUris),
        sandbox: this.config.APP_SANDBOX,
      };
      const outcome = await this.applications.ensure(clientId, clientSecret, input);
      this.logger.log(`application ${clientId} from settings: ${outcome}`);
      this.startupApplication = {
        source: 'settings',
        credentials: {
          client_id: clientId,
          client_secret: clientSecret,
          name: input.name,
          redirect_uris: input.redirectUris,
          allowed_origins: input.allowedOrigins,
          sandbox: input.sandbox,
        },
      };
      return;
    }
    if (!this.config.embedded) return;
    const file = join(this.config.EMBEDDED_DATA_DIR, 'demo-application.json');
    const demoOrigins = [ownOrigin(this.config)];
    if (existsSync(file)) {
      const stored = JSON.parse(readFileSync(file, 'utf8')) as IssuedCredentials;
      let application = await this.applications.find(stored.client_id);
      if (application) {
        // A demo application from before origins were registered has none: give it this service's.
        if (application.allowedOrigins.length === 0) {
          application = (await this.applications.update(application.id, { allowedOrigins: demoOrigins })) ?? application;
        }
        this.startupApplication = { source: 'demo', credentials: { ...stored, allowed_origins: application.allowedOrigins } };
        return;
      }
    }
    if ((await this.applications.count()) > 0) return;
    // No redirect URI: the demo runs the embedded flow, whose last page shows the code to
    // exchange, so a newcomer needs nothing listening on a callback URL. Its one registered
    // origin, this service's own, is the page's default, so the printed link works as it is.
    const credentials = await this.applications.create({
      name: 'Sandbox demo application',
      redirectUris: [],
      allowedOrigins: demoOrigins,
      sandbox: true,
    });
    mkdirSync(this.config.EMBEDDED_DATA_DIR, { recursive: true });
    writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    this.startupApplication = { source: 'demo', credentials };
  }
}

/** Where this service is reached: PUBLIC_BASE_URL, else the listen address (127.0.0.1 for all interfaces). */
function ownOrigin(config: AppConfig): string {
  if (config.PUBLIC_BASE_URL) return new URL(config.PUBLIC_BASE_URL).origin;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`).origin;
}
