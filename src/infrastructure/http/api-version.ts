import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '../../domain/shared/domain-error';

export const API_VERSION_HEADER = 'service-api-version';
/**
 * The header name this API family's official client SDKs send the version in: an alias with the
 * same rules and errors, so those clients work with only their base URL changed.
 */
export const FAMILY_API_VERSION_HEADER = 'finch-api-version';
const HEADER_LABELS: Record<string, string> = { [API_VERSION_HEADER]: 'Service-API-Version', [FAMILY_API_VERSION_HEADER]: 'Finch-API-Version' };
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
    const headers = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>().headers;
    const given = [API_VERSION_HEADER, FAMILY_API_VERSION_HEADER]
      .map((name) => ({ name: HEADER_LABELS[name], value: headers[name] }))
      .filter((h) => h.value !== undefined && h.value !== '');
    if (given.length === 0) {
      throw new DomainError('invalid_request_error', 'Service-API-Version header is required, e.g. Service-API-Version: 2020-09-17', {
        serviceCode: 'missing_version_header',
      });
    }
    for (const { name, value } of given) {
      if (Array.isArray(value) || !isValidApiVersion(value!.trim())) {
        throw new DomainError('invalid_request_error', `${name} must be a date (YYYY-MM-DD), e.g. ${CURRENT_API_VERSION}`, {
          serviceCode: 'invalid_version_header',
        });
      }
      if (!KNOWN_API_VERSIONS.includes(value!.trim())) {
        throw new DomainError(
          'invalid_request_error',
          `${name} ${value!.trim()} is not a version of this API; known versions: ${KNOWN_API_VERSIONS.join(', ')}`,
          { serviceCode: 'invalid_version_header' },
        );
      }
    }
    if (given.length === 2 && (given[0].value as string).trim() !== (given[1].value as string).trim()) {
      throw new DomainError('invalid_request_error', 'Service-API-Version and Finch-API-Version name different versions; send one, or the same in both', {
        serviceCode: 'invalid_version_header',
      });
    }
    return true;
  }
}
