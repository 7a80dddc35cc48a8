import { PipeTransform } from '@nestjs/common';
import { ClassConstructor, plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { invalidRequest, malformedRequest } from '../../domain/shared/domain-error';
import { describeValidationErrors } from './validation';

/** Messages beyond this many are summarised, so a 10,000-element body cannot produce a huge error. */
const MAX_LISTED_PROBLEMS = 20;

/**
 * Validates a bare JSON array body (the global ValidationPipe skips arrays): an object instead
 * of an array is the spec's 400 `bad_request_error`/`malformed_request` "Expected array but
 * received object"; each element is validated like a DTO body (whitelist, unknown fields refused)
 * and failures name their element, e.g. `[3].first_name: first_name must be a string`.
 */
export class ArrayBodyPipe<T extends object> implements PipeTransform<unknown, T[]> {
  /**
   * `surelyValid`: an optional hand-written check of the common element shape, for bodies of
   * thousands of elements (class-validator costs about 6 µs an element). An element it passes
   * must pass the DTO's validation too (its spec says so over generated elements); any other
   * element is validated by class-validator, which words the problems.
   */
  constructor(
    private readonly itemType: ClassConstructor<T>,
    private readonly size: { min: number; max: number },
    private readonly surelyValid?: (element: Record<string, unknown>) => boolean,
  ) {}

  transform(value: unknown): T[] {
    if (!Array.isArray(value)) throw malformedRequest(`Expected array but received ${kindOf(value)}`);
    if (value.length < this.size.min || value.length > this.size.max) {
      throw invalidRequest(`Invalid request: the body must hold ${this.size.min} to ${this.size.max} elements (received ${value.length})`);
    }
    const problems: string[] = [];
    const items = value.map((element, index) => {
      if (typeof element !== 'object' || element === null || Array.isArray(element)) {
        problems.push(`[${index}]: must be an object`);
        return undefined as unknown as T;
      }
      if (this.surelyValid?.(element as Record<string, unknown>)) return Object.assign(new this.itemType(), element);
      const item = plainToInstance(this.itemType, element);
      const errors = validateSync(item, { whitelist: true, forbidNonWhitelisted: true, validationError: { target: false, value: false } });
      problems.push(...describeValidationErrors(errors, `[${index}]`));
      return item;
    });
    if (problems.length > 0) {
      const listed = problems.slice(0, MAX_LISTED_PROBLEMS).join('; ');
      const more = problems.length > MAX_LISTED_PROBLEMS ? ` (and ${problems.length - MAX_LISTED_PROBLEMS} more)` : '';
      throw invalidRequest(`Invalid request: ${listed}${more}`);
    }
    return items;
  }
}

function kindOf(value: unknown): string {
  if (value === undefined) return 'no body';
  if (value === null) return 'null';
  return typeof value;
}
