import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsOptional } from 'class-validator';
import { PRODUCTS } from '../../../domain/providers/provider';

/** A `products` field: a non-empty list of distinct products of the spec's product table. */
export function ProductList({ optional = false, description }: { optional?: boolean; description?: string } = {}): PropertyDecorator {
  const doc = { enum: PRODUCTS, isArray: true, description };
  return applyDecorators(
    optional ? ApiPropertyOptional(doc) : ApiProperty(doc),
    ...(optional ? [IsOptional()] : []),
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(PRODUCTS.length),
    ArrayUnique(),
    IsIn(PRODUCTS, { each: true, message: `each value in products must be one of ${PRODUCTS.join(', ')}` }),
  );
}
