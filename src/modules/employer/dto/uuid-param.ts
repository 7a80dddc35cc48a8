import { ParseUUIDPipe } from '@nestjs/common';
import { invalidRequest } from '../../../domain/shared/domain-error';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any UUID layout (the ids the service mints are v4; others simply are not found). */
export const isUuid = (value: string) => UUID_PATTERN.test(value);

/** A path id that must be a UUID; anything else is 400 naming the parameter (never a database error). */
export const uuidParam = (name: string) =>
  new ParseUUIDPipe({ exceptionFactory: () => invalidRequest(`Invalid request: ${name} must be a UUID`) });
