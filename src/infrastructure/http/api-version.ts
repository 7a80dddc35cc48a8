import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '../../domain/shared/domain-error';

export const API_VERSION_HEADER = 'service-api-version';
export const CURRENT_API_VERSION = '2020-09-17';
/** The versions this service implements; a date it does not know would pin behaviour it never had. */
export const KNOWN_API_VERSIONS: readonly string[] = [CURRENT_API_VERSION];
const REQUIRES_API_VERSION = 'requires-api-version';
const PATTERN = /^([12]\d{3})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** Marks an operation (or a controller) whose calls must carry `Service-API-Version`. */
export const RequiresApiVersion = () => SetMetadata(REQUIRES_API_VERSION, true);

/** The pattern of the spec, plus a real calendar date (2021-02-30 is refused). */
export function isValidApiVersion(value: string): boolean {
  const match = PATTERN.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Enforces the version header where the spec requires it; elsewhere a bad one is ignored. */
@Injectable()
export class ApiVersionGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const required = this.reflector.getAllAndOverride<boolean>(REQUIRES_API_VERSION, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!required) return true;
    const header = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>()
      .headers[API_VERSION_HEADER];
    if (header === undefined || header === '') {
      throw new DomainError('invalid_request_error', 'Service-API-Version header is required, e.g. Service-API-Version: 2020-09-17', {
        serviceCode: 'missing_version_header',
      });
    }
    if (Array.isArray(header) || !isValidApiVersion(header.trim())) {
      throw new DomainError(
        'invalid_request_error',
        `Service-API-Version must be a date (YYYY-MM-DD), e.g. ${CURRENT_API_VERSION}`,
        { serviceCode: 'invalid_version_header' },
      );
    }
    if (!KNOWN_API_VERSIONS.includes(header.trim())) {
      throw new DomainError(
        'invalid_request_error',
        `Service-API-Version ${header.trim()} is not a version of this API; known versions: ${KNOWN_API_VERSIONS.join(', ')}`,
        { serviceCode: 'invalid_version_header' },
      );
    }
    return true;
  }
}
