import { AppConfig } from './app-config';

/**
 * Where clients reach this service when no request says it (a webhook's `job_url`):
 * PUBLIC_BASE_URL, else the address the server listens on, known once it listens (port 0
 * becomes a real port then).
 */
export class ServiceAddress {
  private listening: string | undefined;

  constructor(private readonly config: AppConfig) {}

  /** Told by the bootstrap once the server listens. */
  listeningAt(url: string): void {
    this.listening = url;
  }

  get baseUrl(): string {
    if (this.config.PUBLIC_BASE_URL) return this.config.PUBLIC_BASE_URL.replace(/\/+$/, '');
    if (this.listening) return this.listening;
    const host = this.config.HOST === '0.0.0.0' || this.config.HOST === '::' ? '127.0.0.1' : this.config.HOST;
    return `http://${host}:${this.config.PORT}`;
  }
}
