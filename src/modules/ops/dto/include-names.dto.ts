import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { INDIVIDUAL_NAMES, IndividualNameMap } from '../individual-names';

/**
 * `include=individual_names`: the answer also names the individuals it mentions. Asked for, not
 * always sent, so a read costs no lookup and keeps its shape for clients that only need the ids.
 */
export const IncludeIndividualNames = () =>
  applyDecorators(
    ApiPropertyOptional({
      enum: [INDIVIDUAL_NAMES],
      description: 'individual_names: add `individual_names`, the names the service knows of the individuals each item mentions',
    }),
    IsOptional(),
    IsIn([INDIVIDUAL_NAMES], { message: `include must be ${INDIVIDUAL_NAMES}` }),
  );

/** The query of an ops read of one item that can name its individuals. */
export class IncludeNamesQueryDto {
  @IncludeIndividualNames()
  include?: typeof INDIVIDUAL_NAMES;
}

/** The `individual_names` property of a response, as the OpenAPI document shows it. */
export const IndividualNamesProperty = () =>
  ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { '5b0e7a0e-4c1e-4a8f-9d7e-2f1f0c3b6a11': 'Ada Lovelace' },
    description:
      'With include=individual_names: name by (lower-case) individual id, from the synced directory or the sandbox payroll; ids without a known name are absent',
  });

export type WithIndividualNames<T> = T & { individual_names: IndividualNameMap };
