import { ApiPropertyOptional, ApiQuery } from '@nestjs/swagger';
import { Allow } from 'class-validator';

/**
 * Query parameters every employer operation accepts. `entity_ids` itself is read by
 * `@CurrentEntity()` from the raw query (in all the forms clients send); it is declared here
 * so the validation pipe, which refuses unknown parameters, lets it through.
 */
export class EntityScopedQueryDto {
  @ApiPropertyOptional({ type: [String], format: 'uuid', description: 'The one entity to read (required when the connection has several)' })
  @Allow()
  entity_ids?: unknown;

  @Allow()
  'entity_ids[]'?: unknown;
}

/** `a`, `a,b`, repeated `x=a&x=b` and `x[]=a` all read as a list of strings. */
export function queryList({ value }: { value: unknown }): unknown {
  if (value === undefined) return undefined;
  const values = Array.isArray(value) ? value : [value];
  if (!values.every((v) => typeof v === 'string')) return value;
  return values
    .flatMap((v: string) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** Both spellings of a list parameter (`x` and `x[]`), merged. */
export function mergedList<T extends string>(...lists: (T[] | undefined)[]): T[] | undefined {
  const present = lists.filter((list): list is T[] => list !== undefined);
  return present.length === 0 ? undefined : [...new Set(present.flat())];
}

/** Documents `entity_ids` on operations that take no other query parameters. */
export const ApiEntityQuery = () =>
  ApiQuery({
    name: 'entity_ids',
    required: false,
    type: String,
    isArray: true,
    description: 'The one entity to act on (required when the connection has several)',
  });
