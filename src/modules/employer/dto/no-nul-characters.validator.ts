import { ValidateBy, ValidationOptions } from 'class-validator';

/** True when a string, or any key or string inside an object or array, holds U+0000. */
export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, inner]) => key.includes('\u0000') || containsNul(inner));
  }
  return false;
}

/** PostgreSQL text and jsonb cannot hold U+0000: refuse it here rather than fail in the database. */
export function NoNulCharacters(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'noNulCharacters',
      validator: {
        validate: (value) => !containsNul(value),
        defaultMessage: (args) => `${args?.property} must not contain NUL (U+0000) characters`,
      },
    },
    options,
  );
}
