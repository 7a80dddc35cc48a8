import { ValidationError, ValidationPipe } from '@nestjs/common';
import { invalidRequest } from '../../domain/shared/domain-error';

/** "requests[0].individual_id: individual_id must be a UUID" — every failure, with its field path. */
export function describeValidationErrors(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent === '' ? error.property : /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(`property ${error.property} should not exist`)
        ? `${path}: unknown field`
        : `${path}: ${message}`,
    );
    return own.concat(describeValidationErrors(error.children ?? [], path));
  });
}

/** Whitelist, forbid unknown fields, transform to DTO classes; failures are 400 invalid_request. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => invalidRequest(`Invalid request: ${describeValidationErrors(errors).join('; ')}`),
  });
}
