import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';

/** The base URL clients reach this service at: PUBLIC_BASE_URL, else what the request was sent to. */
export function publicBaseUrl(config: AppConfig, request: FastifyRequest): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}`;
}
