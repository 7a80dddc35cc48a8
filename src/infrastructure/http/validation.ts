import { ValidationError, ValidationPipe } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes, ValidatorOptions } from 'class-validator';
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

/**
 * A nested list whose element is itself a list (`departments: [[]]`) passes class-validator,
 * which validates the inner list as if `each` applied again: an empty one holds nothing to
 * check, and the DTO would be stored with a garbage element. Each element of a nested list
 * must be an object.
 */
export function nestedListErrors(value: object): ValidationError[] {
  const errors: ValidationError[] = [];
  const nested = getMetadataStorage()
    .getTargetValidationMetadatas(value.constructor, '', true, false)
    .filter((m) => m.type === ValidationTypes.NESTED_VALIDATION);
  for (const property of new Set(nested.map((m) => m.propertyName))) {
    const child = (value as Record<string, unknown>)[property];
    if (Array.isArray(child)) {
      const children = child.flatMap((element, index): ValidationError[] => {
        if (Array.isArray(element)) return [errorAt(String(index), { isObject: 'must be an object, not a list' })];
        return element !== null && typeof element === 'object' ? withParent(String(index), nestedListErrors(element)) : [];
      });
      if (children.length > 0) errors.push(errorAt(property, undefined, children));
    } else if (child !== null && typeof child === 'object') {
      errors.push(...withParent(property, nestedListErrors(child)));
    }
  }
  return errors;
}

function errorAt(property: string, constraints?: Record<string, string>, children: ValidationError[] = []): ValidationError {
  return { property, constraints, children };
}

function withParent(property: string, children: ValidationError[]): ValidationError[] {
  return children.length === 0 ? [] : [errorAt(property, undefined, children)];
}

/** The validation pipe with the nested-list rule added after class-validator's own. */
class ApiValidationPipe extends ValidationPipe {
  protected override async validate(object: object, validatorOptions?: ValidatorOptions): Promise<ValidationError[]> {
    const errors = await super.validate(object, validatorOptions);
    return errors.length > 0 ? errors : nestedListErrors(object);
  }
}

/** Whitelist, forbid unknown fields, transform to DTO classes; failures are 400 invalid_request. */
export function createValidationPipe(): ValidationPipe {
  return new ApiValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => invalidRequest(`Invalid request: ${describeValidationErrors(errors).join('; ')}`),
  });
}
