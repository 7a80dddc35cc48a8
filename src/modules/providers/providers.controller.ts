import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import {
  AUTHENTICATION_TYPES,
  BENEFIT_FREQUENCIES,
  BENEFIT_TYPES,
  PRODUCTS,
  ProviderDescriptor,
} from '../../domain/providers/provider';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';

/** A provider as `GET /providers` renders it: the descriptor without the simulation's hints. */
export type ProviderResponse = Omit<ProviderDescriptor, 'live_latency_ms'>;

export function toProviderResponse({ live_latency_ms: _latency, ...provider }: ProviderDescriptor): ProviderResponse {
  return provider;
}

// Public catalogue data: no access token and no version header, like the connect page that uses it.
@ApiTags('providers')
@Controller('providers')
export class ProvidersController {
  constructor(private readonly catalogue: ProviderCatalogue) {}

  @Get()
  @ApiOperation({ summary: 'Every supported payroll and HR provider, with its products and benefit support' })
  @ApiOkResponse({ description: 'The provider catalogue', schema: { type: 'array', items: providerSchema() } })
  list(): ProviderResponse[] {
    return this.catalogue.list().map(toProviderResponse);
  }
}

function providerSchema(): SchemaObject {
  const operations: SchemaObject = {
    type: 'object',
    properties: Object.fromEntries(
      ['create', 'read', 'update', 'delete'].map((op) => [op, { type: 'string', enum: ['supported', 'not_supported_by_provider'] }]),
    ),
  };
  const nullableList = (values: readonly string[]): SchemaObject => ({
    type: 'array',
    nullable: true,
    items: { type: 'string', enum: [...values] },
  });
  const benefitSupport: SchemaObject = {
    type: 'object',
    nullable: true,
    description: 'null when the provider does not support the benefit type',
    properties: {
      supported_features: {
        type: 'object',
        description: 'null: the feature does not apply to the type; empty array: not supported',
        properties: {
          description: { type: 'string', nullable: true },
          frequencies: { type: 'array', items: { type: 'string', enum: [...BENEFIT_FREQUENCIES] } },
          annual_maximum: { type: 'boolean', nullable: true },
          catch_up: { type: 'boolean', nullable: true },
          company_contribution: nullableList(['match', 'fixed', 'percent']),
          employee_deduction: nullableList(['fixed', 'percent']),
          hsa_contribution_limit: nullableList(['individual', 'family']),
        },
      },
      supported_operations: {
        type: 'object',
        description: 'individual_benefits: create = enroll, update = re-enroll (overwrite), delete = unenroll',
        properties: { company_benefits: operations, individual_benefits: operations },
      },
    },
  };
  const benefitsSupport: SchemaObject = {
    type: 'object',
    properties: Object.fromEntries(BENEFIT_TYPES.map((type) => [type, benefitSupport])),
  };
  const products: SchemaObject = { type: 'array', items: { type: 'string', enum: [...PRODUCTS] } };
  return {
    type: 'object',
    properties: {
      id: { type: 'string', example: 'gusto' },
      display_name: { type: 'string', example: 'Gusto' },
      products,
      manual: { type: 'boolean', description: 'true: an Assisted provider' },
      mfa_required: { type: 'boolean' },
      beta: { type: 'boolean' },
      primary_color: { type: 'string', example: '#f45d48' },
      authentication_methods: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: [...AUTHENTICATION_TYPES] },
            products,
            benefits_support: benefitsSupport,
          },
        },
      },
      benefits_support: benefitsSupport,
      benefits_not_supported: {
        type: 'object',
        description: 'Why a benefit type is null in benefits_support, where the provider says why',
        additionalProperties: { type: 'string' },
        example: { hsa_post: 'Gusto’s Health Savings Account is pre-tax only' },
      },
    },
  };
}
