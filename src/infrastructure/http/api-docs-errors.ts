import { HttpException, HttpStatus } from '@nestjs/common';
import type { ExampleObject, OperationObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { DomainError, ErrorFamily, invalidRequest, malformedRequest, notFound } from '../../domain/shared/domain-error';
import { CURRENT_API_VERSION } from './api-version';
import { ErrorResponse, internalError, toErrorResponse } from './error-response';
import {
  idempotencyAnswerNotKept,
  idempotencyKeyInUse,
  idempotencyKeyOf,
  idempotencyKeyReused,
  idempotencyKeysExhausted,
} from './idempotency/idempotency-key';

export const ERROR_SCHEMA_NAME = 'Error';
const ERROR_REF = `#/components/schemas/${ERROR_SCHEMA_NAME}`;

/**
 * Every family the renderer knows, so the `name` enum below follows error-response.ts: adding a
 * family without listing it here fails to compile.
 */
const FAMILIES: Record<ErrorFamily, true> = {
  bad_request_error: true,
  invalid_request_error: true,
  authentication_error: true,
  forbidden_error: true,
  not_found_error: true,
  conflict_error: true,
  payload_too_large: true,
  unprocessable_request_error: true,
  rate_limit_error: true,
  server_error: true,
  provider_error: true,
  provider_timeout: true,
};

/** The error object as error-response.ts renders it, one schema for every error response. */
export function errorSchema(): SchemaObject {
  const names = [...new Set(Object.keys(FAMILIES).map((family) => toErrorResponse(new DomainError(family as ErrorFamily, '')).body.name))];
  return {
    type: 'object',
    description:
      'Every error, whatever its status. Some errors add fields beside these: `context` (connection_already_exists, ' +
      'policy_already_exists), `retry_after` in seconds (429, also sent as the Retry-After header), `retry_at` (refresh quota).',
    required: ['code', 'name', 'message'],
    properties: {
      code: { type: 'integer', description: 'The HTTP status of the response', example: 400 },
      name: { type: 'string', enum: names, description: 'The error family', example: 'invalid_request_error' },
      service_code: { type: 'string', description: 'Machine code to match on; absent on some errors', example: 'invalid_request' },
      message: { type: 'string', description: 'What went wrong, for people; names the offending field where there is one' },
    },
    additionalProperties: true,
  };
}

/** One way an operation can fail: the error the service raises and when it does. */
interface ErrorCase {
  error: unknown;
  when: string;
}

const errorCase = (error: unknown, when: string): ErrorCase => ({ error, when });
const domain = (family: ErrorFamily, serviceCode: string | undefined, message: string, details?: Record<string, unknown>) =>
  new DomainError(family, message, { serviceCode, details });
const thrown = (act: () => unknown): unknown => {
  try {
    act();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
};

/** The errors guards, pipes and the edge raise, shared by many operations. */
const COMMON = {
  malformedBody: errorCase(
    malformedRequest('Request body is not valid JSON: Unexpected end of JSON input'),
    'the body is not JSON, is empty, or nests deeper than the service reads',
  ),
  invalidRequest: errorCase(
    invalidRequest('Invalid request: limit must not be greater than 10000'),
    'a parameter or body field is invalid; the message names it',
  ),
  missingVersion: errorCase(
    domain('invalid_request_error', 'missing_version_header', `Service-API-Version header is required, e.g. Service-API-Version: ${CURRENT_API_VERSION}`),
    'the Service-API-Version header is absent',
  ),
  invalidVersion: errorCase(
    domain('invalid_request_error', 'invalid_version_header', `Service-API-Version must be a date (YYYY-MM-DD), e.g. ${CURRENT_API_VERSION}`),
    'the Service-API-Version header is not a date, or not a version of this API',
  ),
  invalidIdempotencyKey: errorCase(thrown(() => idempotencyKeyOf('')), 'the Idempotency-Key header is empty, too long or not printable ASCII'),
  idempotencyKeyReused: errorCase(idempotencyKeyReused(), 'the Idempotency-Key was used with another request in the last 24 h'),
  idempotencyKeyInUse: errorCase(idempotencyKeyInUse(), 'a request with the same Idempotency-Key is still running'),
  idempotencyAnswerNotKept: errorCase(
    idempotencyAnswerNotKept(200, 'its body (70000 bytes) is larger than the 65536 bytes kept for a replay'),
    'the request with this Idempotency-Key was processed, but its answer was too large to keep, or past the application’s allowance for the day; it is not run again',
  ),
  idempotencyKeysExhausted: errorCase(
    idempotencyKeysExhausted(20000, 3600),
    'the application has taken the Idempotency-Keys it may take in a day; retry after `retry_after` seconds (also the Retry-After header), or without the header',
  ),
  payloadTooLarge: errorCase(new HttpException('Request body is too large', HttpStatus.PAYLOAD_TOO_LARGE), 'the body is larger than the service accepts'),
  unsupportedMediaType: errorCase(
    new HttpException('Unsupported Media Type: text/plain', HttpStatus.UNSUPPORTED_MEDIA_TYPE),
    'the body is not `application/json`',
  ),
  serverError: errorCase(internalError(), 'the service failed unexpectedly; the message never carries internals'),

  missingAccessToken: errorCase(
    domain('authentication_error', 'missing_access_token', 'Authorization: Bearer <access token> is required'),
    'no `Authorization: Bearer` header',
  ),
  invalidAccessToken: errorCase(
    domain('authentication_error', 'invalid_access_token', 'The access token is invalid or has been revoked'),
    'the token is unknown, malformed or revoked (its connection was disconnected)',
  ),
  tokenRateLimited: errorCase(
    domain('rate_limit_error', 'rate_limit_exceeded', 'Rate limit exceeded for this access token; retry in 1 s', { retry_after: 1 }),
    'the token made too many requests; retry after `retry_after` seconds (also the Retry-After header)',
  ),
  reauthenticate: errorCase(
    domain('authentication_error', 'reauthenticate_user', 'The connection needs reauthentication before data can be read or written'),
    'the connection’s provider sign-in lapsed (status `reauth`): create a reauthentication session',
  ),
  productNotGranted: errorCase(
    domain('forbidden_error', 'product_not_granted', 'The benefits product was not granted to this connection'),
    'the connection was not granted the operation’s product',
  ),
  entityNotAuthorized: errorCase(
    domain('forbidden_error', 'entity_not_authorized', 'Entity 0f8c1a52-3a5e-4a8f-9a63-1c2b7d6e4f10 is not authorized for this access token'),
    'an `entity_ids` query value is not an active entity of the token’s connection',
  ),

  invalidClient: errorCase(
    domain('authentication_error', 'invalid_client', 'Invalid client_id or client_secret'),
    'the application credentials (HTTP Basic `client_id:client_secret`) are missing or wrong',
  ),
  missingOpsCredentials: errorCase(
    domain('authentication_error', 'missing_ops_credentials', 'The ops API needs the ops credentials: Authorization: Basic <ops username:password>'),
    'no `Authorization: Basic` header with the ops credentials',
  ),
  invalidOpsCredentials: errorCase(
    domain('authentication_error', 'invalid_ops_credentials', 'The ops credentials are not valid'),
    'the ops username or password is wrong',
  ),
  opsSignInThrottled: errorCase(
    domain('rate_limit_error', 'too_many_failed_sign_ins', 'Too many failed ops sign-ins from this address; try again in 60 s', { retry_after: 60 }),
    'too many wrong ops credentials from this address or for this username',
  ),
  providerError: errorCase(
    domain('provider_error', undefined, 'Sandbox Payroll (Automated) answered with a server error (503 Service Unavailable)'),
    'a live call to the payroll provider failed',
  ),
  providerTimeout: errorCase(
    domain('provider_timeout', undefined, 'Sandbox Payroll (Automated) did not answer within 30000 ms'),
    'the payroll provider did not answer in time',
  ),
} satisfies Record<string, ErrorCase>;

const SPECIFIC = {
  jobNotFound: errorCase(notFound('No job 7b0d6d1e-2a4f-4c3e-9a51-5f2f3c1d9e80 for this connection', 'job_not_found'), 'no such job of this connection'),
  refreshQuota: errorCase(
    domain('rate_limit_error', 'refresh_quota_exceeded', 'This connection has used its 10 data syncs for this hour; the next may start at 2026-03-02T15:00:00.000Z', {
      retry_at: '2026-03-02T15:00:00.000Z',
      retry_after: 1200,
    }),
    'the connection used its data syncs for this hour; `retry_at` says when the next may start',
  ),
  syncNeedsReauth: errorCase(
    domain('authentication_error', 'reauthenticate_user', 'The connection needs reauthentication before its data can be synced'),
    'the connection’s provider sign-in lapsed (status `reauth`)',
  ),
  sandboxConnectionRequired: errorCase(
    domain('forbidden_error', 'sandbox_connection_required', 'Sandbox job operations are only for sandbox connections'),
    'the token’s connection is not a sandbox connection',
  ),
  sandboxOnly: errorCase(
    domain('forbidden_error', 'sandbox_only', 'Sandbox operations need sandbox application credentials'),
    'the application is not a sandbox application',
  ),
  providerNotFound: errorCase(
    domain('not_found_error', 'provider_not_found', 'No provider with id paycheck; GET /providers lists them'),
    '`provider_id` is not in `GET /providers`',
  ),
  sandboxCompanyNotFound: errorCase(
    notFound('No sandbox company 5f7a3e7c-1d2b-4f5a-8c9d-0e1f2a3b4c5d for this application', 'company_not_found'),
    'no sandbox company with this `company_id` for the application',
  ),
  individualNotFound: errorCase(
    notFound('No individual 3c1f6a2e-8b4d-4e9f-a1c2-7d5e6f8a9b0c at this employer', 'individual_not_found'),
    'no such individual at the sandbox employer',
  ),
  sandboxBenefitNotFound: errorCase(
    notFound('No benefit 8d0c6f5e-3b2a-4c1d-9e8f-7a6b5c4d3e2f at the sandbox provider for this entity', 'benefit_not_found'),
    'the sandbox provider runs no such benefit for the entity',
  ),
  sandboxEnrollmentNotFound: errorCase(
    notFound(
      'Individual 3c1f6a2e-8b4d-4e9f-a1c2-7d5e6f8a9b0c has no enrollment in benefit 8d0c6f5e-3b2a-4c1d-9e8f-7a6b5c4d3e2f in force on 2026-06-01 or scheduled after it',
      'enrollment_not_found',
    ),
    'the individual has no enrollment in the benefit at the sandbox provider in force on the date or scheduled after it',
  ),
  connectionExists: errorCase(
    domain('invalid_request_error', 'connection_already_exists', 'A connection already exists for this customer_id; create a reauthentication session instead', {
      context: { customer_id: 'customer-42', connection_id: '9e2f1c3a-4b5d-4e6f-8a7b-1c2d3e4f5a6b' },
    }),
    'the customer already has a live connection (`context` names it): create a reauthentication session instead',
  ),
  pageSizeLimitExceeded: errorCase(
    domain('unprocessable_request_error', 'page_size_limit_exceeded', 'Page size exceeds the maximum of 10000 items. Please reduce the limit parameter.'),
    'limit above 10,000 (the public document answers 422 here)',
  ),
  connectionNotFound: errorCase(
    invalidRequest('No connection 9e2f1c3a-4b5d-4e6f-8a7b-1c2d3e4f5a6b for this application', 'connection_not_found'),
    'no such connection of the application',
  ),
  invalidGrant: errorCase(
    domain('invalid_request_error', 'invalid_grant', 'The authorization code has already been used'),
    'the code is unknown, expired, already used, or was issued for another application or redirect_uri',
  ),
  bodyCredentials: errorCase(
    domain('authentication_error', 'invalid_client', 'Invalid client_id or client_secret'),
    '`client_id` or `client_secret` is wrong',
  ),
  companyNotFound: errorCase(
    notFound('The provider has no company data for this entity', 'company_not_found'),
    'the provider has no company data for the entity',
  ),
  payGroupNotFound: errorCase(
    notFound('No pay group 1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d for this entity', 'pay_group_not_found'),
    'no such pay group in the entity',
  ),
  benefitNotFound: errorCase(
    notFound('No benefit 8d0c6f5e-3b2a-4c1d-9e8f-7a6b5c4d3e2f in this entity', 'benefit_not_found'),
    'no such benefit in the entity (or its creation failed)',
  ),
  benefitExists: errorCase(
    domain('conflict_error', 'benefit_already_exists', 'Benefit 8d0c6f5e-3b2a-4c1d-9e8f-7a6b5c4d3e2f already has type 401k, frequency every_paycheck and this description'),
    'another benefit of the same type and frequency already has this description',
  ),
  unsupportedBenefit: errorCase(
    domain('unprocessable_request_error', 'unsupported_paramters', 'Sandbox Payroll (Assisted) does not support hsa_post benefits'),
    'the provider does not support the benefit type, frequency or company match (the spelling is the API family’s)',
  ),
  registerOnAutomated: errorCase(
    domain(
      'invalid_request_error',
      undefined,
      'Register is for Assisted providers only: this connection’s provider is Automated, create the benefit with POST /employer/benefits',
    ),
    'the provider is Automated: register is only for Assisted providers (no `service_code`)',
  ),
  unprocessableEnrollment: errorCase(
    domain('unprocessable_request_error', 'unprocessable_parameters', 'Unsupported by the provider: Sandbox Payroll (Automated) does not support catch_up for 401k'),
    'the provider does not support part of a configuration (e.g. catch-up, an HSA limit)',
  ),
  ruleNotFound: errorCase(
    domain('not_found_error', 'rule_not_found', 'No pay-statement item rule 2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e for this entity'),
    'no such rule in the entity',
  ),
  rulePriorityTaken: errorCase(
    domain('conflict_error', 'priority_conflict', 'priority 3 is already taken by rule 2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e; priorities are unique per entity'),
    'another rule of the entity has this priority',
  ),
  taskNotFound: errorCase(notFound('No ops task 4d5e6f7a-8b9c-4d0e-8f1a-2b3c4d5e6f7a', 'task_not_found'), 'no such ops task'),
  taskResolved: errorCase(
    domain('conflict_error', 'task_already_resolved', 'Task 4d5e6f7a-8b9c-4d0e-8f1a-2b3c4d5e6f7a is already completed'),
    'the task was already completed or failed',
  ),
  deadLetterNotFound: errorCase(notFound('No dead letter 6f7a8b9c-0d1e-4f2a-8b3c-4d5e6f7a8b9c', 'dead_letter_not_found'), 'no such dead letter'),
  deadLetterNotOpen: errorCase(
    domain('conflict_error', 'dead_letter_not_open', 'Dead letter 6f7a8b9c-0d1e-4f2a-8b3c-4d5e6f7a8b9c is already discarded'),
    'the dead letter was already replayed or discarded',
  ),
  opsConnectionNotFound: errorCase(notFound('No connection 9e2f1c3a-4b5d-4e6f-8a7b-1c2d3e4f5a6b', 'connection_not_found'), 'no such connection'),
  opsJobNotFound: errorCase(notFound('No job 7b0d6d1e-2a4f-4c3e-9a51-5f2f3c1d9e80', 'job_not_found'), 'no such job'),
  jobNotRetriable: errorCase(
    domain('conflict_error', 'job_not_in_error', 'Job 7b0d6d1e-2a4f-4c3e-9a51-5f2f3c1d9e80 is complete; only a job in error can be retried'),
    'the job is not in error, is manual, has no retrier (`job_not_retriable`), or a sync of the connection is open (`sync_already_open`)',
  ),
  entitiesNotAuthorized: errorCase(
    domain('forbidden_error', 'entity_not_authorized', 'Entities not authorized for this access token: 0f8c1a52-3a5e-4a8f-9a63-1c2b7d6e4f10'),
    'an `entity_ids` value is not an entity of the token’s connection',
  ),
  sagaNotFound: errorCase(notFound('No saga 0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', 'saga_not_found'), 'no such saga'),
  discrepancyNotFound: errorCase(notFound('No discrepancy 3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f', 'discrepancy_not_found'), 'no such discrepancy'),
  discrepancyResolved: errorCase(
    domain('conflict_error', 'discrepancy_resolved', 'Discrepancy 3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f is resolved (agreed); a resolved discrepancy cannot be acknowledged'),
    'the discrepancy is resolved',
  ),
  discrepancyNotReappliable: errorCase(
    domain('conflict_error', 'connection_disconnected', 'Discrepancy 3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f cannot be re-applied: its connection 9e2f1c3a-4b5d-4e6f-8a7b-1c2d3e4f5a6b is disconnected'),
    'nothing can be sent to the provider: the connection is disconnected (`connection_disconnected`) or needs reauthentication (`connection_needs_reauth`), the entity is disconnected (`entity_disconnected`), the benefit is gone (`benefit_gone`)',
  ),
  policyNotFound: errorCase(notFound('No policy 5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', 'policy_not_found'), 'no such policy'),
  entityDiscrepancyNotFound: errorCase(
    notFound('No discrepancy 3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7 for this entity', 'discrepancy_not_found'),
    'no such discrepancy in the entity',
  ),
  paymentNotReconciled: errorCase(
    notFound(
      'No reconciled statement of payment 6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d for this entity; statements are reconciled after each sync (GET /reconciliation/status)',
      'payment_not_reconciled',
    ),
    'the entity has no reconciled statement of the payment (unknown, or not reconciled yet)',
  ),
  policyTargetNotFound: errorCase(
    notFound('No benefit 8d0c6f5e-3b2a-4c1d-9e8f-7a6b5c4d3e2f in entity 0f8c1a52-3a5e-4a8f-9a63-1c2b7d6e4f10', 'benefit_not_found'),
    'the connection, entity or benefit does not exist (`connection_not_found`, `entity_not_found`, `benefit_not_found`)',
  ),
  policyExists: errorCase(
    domain('conflict_error', 'policy_already_exists', 'Entity 0f8c1a52-3a5e-4a8f-9a63-1c2b7d6e4f10 already has a policy for benefit 8d0c6f5e-3b2a-4c1d-9e8f-7a6b5c4d3e2f', {
      context: { policy_id: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b' },
    }),
    'the entity already has a policy for the benefit (`context.policy_id` names it)',
  ),
  unsupportedPolicy: errorCase(
    domain('unprocessable_request_error', 'unprocessable_parameters', 'Unsupported by the provider: Sandbox Payroll (Automated) does not support catch_up for 401k'),
    'the provider does not support part of the configuration',
  ),
} satisfies Record<string, ErrorCase>;

type Specific = keyof typeof SPECIFIC;
const LIVE = 'live';

/**
 * Errors particular to an operation, beside those of its guards and inputs. `live`: the
 * operation may call the payroll provider while the client waits (502/504 when that fails).
 */
export const OPERATION_ERRORS: Record<string, readonly (Specific | typeof LIVE)[]> = {
  'POST /connect/sessions': ['connectionExists'],
  'POST /connect/sessions/reauthenticate': ['connectionNotFound'],
  'POST /auth/token': ['invalidGrant', 'bodyCredentials'],
  'POST /sandbox/connections': ['sandboxOnly', 'providerNotFound'],
  'POST /sandbox/connections/accounts': ['sandboxOnly', 'providerNotFound', 'sandboxCompanyNotFound'],
  'PUT /sandbox/company': ['sandboxConnectionRequired'],
  'POST /sandbox/directory': ['sandboxConnectionRequired'],
  'PUT /sandbox/individual/{individual_id}': ['sandboxConnectionRequired', 'individualNotFound'],
  'PUT /sandbox/employment/{individual_id}': ['sandboxConnectionRequired', 'individualNotFound'],
  'POST /sandbox/payment': ['sandboxConnectionRequired'],
  'PUT /sandbox/benefits/{benefit_id}/individuals/{individual_id}': [
    'sandboxConnectionRequired',
    'sandboxBenefitNotFound',
    'individualNotFound',
    'unprocessableEnrollment',
  ],
  'DELETE /sandbox/benefits/{benefit_id}/individuals/{individual_id}': [
    'sandboxConnectionRequired',
    'sandboxBenefitNotFound',
    'individualNotFound',
    'sandboxEnrollmentNotFound',
  ],
  'POST /sandbox/payroll/adjustments': ['sandboxConnectionRequired'],
  'GET /sandbox/payroll/adjustments': ['sandboxConnectionRequired'],
  'DELETE /sandbox/payroll/adjustments': ['sandboxConnectionRequired'],
  'POST /sandbox/jobs': ['sandboxConnectionRequired', 'refreshQuota', 'syncNeedsReauth'],
  'GET /sandbox/jobs/configuration': ['sandboxConnectionRequired'],
  'PUT /sandbox/jobs/configuration': ['sandboxConnectionRequired'],
  'POST /jobs/automated': ['refreshQuota', 'syncNeedsReauth'],
  'GET /jobs/automated/{job_id}': ['jobNotFound'],
  'GET /jobs/manual/{job_id}': ['jobNotFound'],
  'POST /disconnect-entity': ['entitiesNotAuthorized'],
  'POST /forward': [LIVE],
  'GET /employer/company': ['companyNotFound', LIVE],
  'GET /employer/directory': ['pageSizeLimitExceeded', LIVE],
  'POST /employer/individual': [LIVE],
  'POST /employer/employment': [LIVE],
  'GET /employer/payment': [LIVE],
  'POST /employer/pay-statement': [LIVE],
  'GET /employer/pay-groups': [LIVE],
  'GET /employer/pay-groups/{pay_group_id}': ['payGroupNotFound', LIVE],
  'GET /employer/pay-statement-item': [LIVE],
  'POST /employer/pay-statement-item/rule': ['rulePriorityTaken'],
  'PUT /employer/pay-statement-item/rule/{rule_id}': ['ruleNotFound', 'rulePriorityTaken'],
  'DELETE /employer/pay-statement-item/rule/{rule_id}': ['ruleNotFound'],
  'GET /employer/benefits': [LIVE],
  'POST /employer/benefits': ['unsupportedBenefit', LIVE],
  'POST /employer/benefits/register': ['registerOnAutomated', 'unsupportedBenefit'],
  'GET /employer/benefits/{benefit_id}': ['benefitNotFound', LIVE],
  'POST /employer/benefits/{benefit_id}': ['benefitNotFound', 'benefitExists', 'unsupportedBenefit', LIVE],
  'POST /employer/benefits/{benefit_id}/individuals': ['benefitNotFound', 'unprocessableEnrollment', LIVE],
  'DELETE /employer/benefits/{benefit_id}/individuals': ['benefitNotFound', LIVE],
  'GET /employer/benefits/{benefit_id}/individuals': ['benefitNotFound', LIVE],
  'GET /employer/benefits/{benefit_id}/enrolled': ['benefitNotFound', LIVE],
  'GET /reconciliation/discrepancies/{discrepancy_id}': ['entityDiscrepancyNotFound'],
  'GET /reconciliation/payments/{payment_id}/results': ['paymentNotReconciled'],
  'GET /reconciliation/payments/{payment_id}/contributions': ['paymentNotReconciled'],
  'GET /ops/api/tasks/{task_id}': ['taskNotFound'],
  'POST /ops/api/tasks/{task_id}/complete': ['taskNotFound', 'taskResolved'],
  'POST /ops/api/tasks/{task_id}/fail': ['taskNotFound', 'taskResolved'],
  'GET /ops/api/dead-letters/{dead_letter_id}': ['deadLetterNotFound'],
  'POST /ops/api/dead-letters/{dead_letter_id}/discard': ['deadLetterNotFound', 'deadLetterNotOpen'],
  'GET /ops/api/connections/{connection_id}': ['opsConnectionNotFound'],
  'GET /ops/api/jobs/{job_id}': ['opsJobNotFound'],
  'POST /ops/api/jobs/{job_id}/retry': ['opsJobNotFound', 'jobNotRetriable'],
  'GET /ops/api/sagas/{saga_id}': ['sagaNotFound'],
  'GET /ops/api/discrepancies/{discrepancy_id}': ['discrepancyNotFound'],
  'POST /ops/api/discrepancies/{discrepancy_id}/acknowledge': ['discrepancyNotFound', 'discrepancyResolved'],
  'POST /ops/api/discrepancies/{discrepancy_id}/reapply': ['discrepancyNotFound', 'discrepancyResolved', 'discrepancyNotReappliable', 'unprocessableEnrollment', LIVE],
  'POST /ops/api/policies': ['policyTargetNotFound', 'policyExists', 'unsupportedPolicy'],
  'GET /ops/api/policies/{policy_id}': ['policyNotFound'],
  'POST /ops/api/policies/{policy_id}': ['policyNotFound', 'unsupportedPolicy'],
  'DELETE /ops/api/policies/{policy_id}': ['policyNotFound'],
};

/** What the document says about an operation, enough to know which errors it can produce. */
export interface OperationTraits {
  key: string;
  method: string;
  path: string;
  requiresVersion: boolean;
}

const securityNames = (operation: OperationObject) => new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)));
const parameterIn = (operation: OperationObject, where: string) =>
  (operation.parameters ?? []).some((parameter) => 'in' in parameter && parameter.in === where);

/** Every error the operation can answer with, in the order they are checked. */
export function errorCasesOf(
  operation: OperationObject,
  traits: OperationTraits,
  schemes: { bearer: string; client: string; ops: string },
): ErrorCase[] {
  const security = securityNames(operation);
  const cases: ErrorCase[] = [];
  const hasBody = operation.requestBody !== undefined;
  if (security.has(schemes.ops)) cases.push(COMMON.missingOpsCredentials, COMMON.invalidOpsCredentials, COMMON.opsSignInThrottled);
  if (security.has(schemes.bearer)) {
    cases.push(COMMON.missingAccessToken, COMMON.invalidAccessToken, COMMON.tokenRateLimited);
    // Every employer operation reads or writes a product's data; the reconciliation reads need `benefits`.
    if (traits.path.startsWith('/employer/') || traits.path.startsWith('/reconciliation/')) cases.push(COMMON.reauthenticate, COMMON.productNotGranted);
    // The guard checks `entity_ids` on every token operation, also where the operation takes none.
    cases.push(COMMON.entityNotAuthorized);
  }
  if (security.has(schemes.client)) cases.push(COMMON.invalidClient);
  if (traits.requiresVersion) cases.push(COMMON.missingVersion, COMMON.invalidVersion);
  if (traits.method === 'post') {
    cases.push(COMMON.invalidIdempotencyKey, COMMON.idempotencyKeyReused, COMMON.idempotencyKeyInUse, COMMON.idempotencyAnswerNotKept, COMMON.idempotencyKeysExhausted);
  }
  if (hasBody) cases.push(COMMON.malformedBody, COMMON.payloadTooLarge, COMMON.unsupportedMediaType);
  if (hasBody || parameterIn(operation, 'query') || parameterIn(operation, 'path')) cases.push(COMMON.invalidRequest);
  for (const name of OPERATION_ERRORS[traits.key] ?? []) {
    if (name === LIVE) cases.push(COMMON.providerError, COMMON.providerTimeout);
    else cases.push(SPECIFIC[name]);
  }
  cases.push(COMMON.serverError);
  return cases;
}

/** The cases grouped into responses by status, each with the error schema and one example per case. */
export function errorResponses(cases: readonly ErrorCase[]): Record<string, ResponseObject> {
  const byStatus = new Map<number, { when: string; rendered: ErrorResponse }[]>();
  for (const item of cases) {
    const rendered = toErrorResponse(item.error);
    byStatus.set(rendered.status, [...(byStatus.get(rendered.status) ?? []), { when: item.when, rendered }]);
  }
  const responses: Record<string, ResponseObject> = {};
  for (const [status, items] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    const examples: Record<string, ExampleObject> = {};
    const lines = new Set<string>();
    for (const { when, rendered } of items) {
      const code = rendered.body.service_code ?? rendered.body.name;
      examples[code] ??= { summary: when, value: rendered.body };
      lines.add(`- \`${code}\`: ${when}`);
    }
    const retryAfter = items.some(({ rendered }) => rendered.headers?.['retry-after'] !== undefined);
    responses[String(status)] = {
      description: `${STATUS_TITLES[status] ?? 'Error'}\n\n${[...lines].join('\n')}`,
      ...(retryAfter ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } } } : {}),
      content: { 'application/json': { schema: { $ref: ERROR_REF }, examples } },
    };
  }
  return responses;
}

const STATUS_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'Provider error',
  504: 'Provider timeout',
};
