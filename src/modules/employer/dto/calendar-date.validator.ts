import { isISO8601, ValidateBy, ValidationOptions } from 'class-validator';

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** A real calendar date written `YYYY-MM-DD` (2026-02-30 is refused). */
export function isCalendarDate(value: unknown): value is string {
  return typeof value === 'string' && DATE_PATTERN.test(value) && isISO8601(value, { strict: true });
}

export function IsCalendarDate(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCalendarDate',
      validator: {
        validate: (value) => isCalendarDate(value),
        defaultMessage: (args) => `${args?.property} must be a date written YYYY-MM-DD, e.g. 2026-01-31`,
      },
    },
    options,
  );
}
