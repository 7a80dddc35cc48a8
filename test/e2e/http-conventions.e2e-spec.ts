import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { DEFAULT_BODY_LIMIT } from '../../src/infrastructure/http/body-limits';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUUID, Length, Min, ValidateNested } from 'class-validator';
import { DomainError } from '../../src/domain/shared/domain-error';
import { RequiresApiVersion } from '../../src/infrastructure/http/api-version';
import { describeWithPostgres } from '../setup/test-env';
import { json, startTestService, TestService } from '../utils/test-app';

class ItemDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('4')
  id: string;
}

class NestedDto {
  @ApiProperty({ type: [ItemDto] })
  @ValidateNested({ each: true })
  @Type(() => ItemDto)
  items: ItemDto[];
}

class EchoDto {
  @ApiProperty({ minLength: 1, maxLength: 255 })
  @IsString()
  @Length(1, 255)
  name: string;

  @ApiPropertyOptional({ minimum: 0 })
  @IsOptional()
  @IsInt()
  @Min(0)
  count?: number;

  @ApiPropertyOptional({ type: NestedDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => NestedDto)
  nested?: NestedDto;
}

/** Routes that exercise the conventions every real controller relies on. */
@Controller('probe')
class ProbeController {
  @Post('echo')
  echo(@Body() body: EchoDto) {
    return { received: body, is_dto: body instanceof EchoDto };
  }

  @Get('versioned')
  @RequiresApiVersion()
  versioned() {
    return { ok: true };
  }

  @Get('open')
  open() {
    return { ok: true };
  }

  @Get('boom')
  boom(): never {
    throw new Error('connection to 10.0.0.7 refused; password=hunter2 at /srv/app/secret.ts:42');
  }

  @Get('conflict')
  conflict(): never {
    throw new DomainError('conflict_error', 'Idempotency-Key reused with another body', {
      serviceCode: 'idempotency_key_reused',
      details: { context: { key: 'k1' } },
    });
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describeWithPostgres('HTTP conventions', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ extraModules: [ProbeModule] });
  });
  afterAll(() => service?.close());

  describe('error object', () => {
    it('renders unknown routes as 404 not_found_error', async () => {
      const res = await service.request('/no/such/route');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 404, name: 'not_found_error', message: 'No route for GET /no/such/route' });
    });

    it('renders unparsable JSON as 400 bad_request_error / malformed_request', async () => {
      const res = await service.request('/probe/echo', json('{"name": "x",'));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, name: 'bad_request_error', service_code: 'malformed_request' });
      expect(res.body.message).toMatch(/not valid JSON/);
    });

    it('refuses an empty JSON body and prototype poisoning as malformed', async () => {
      const empty = await service.request('/probe/echo', json(''));
      expect(empty.status).toBe(400);
      expect(empty.body).toMatchObject({ name: 'bad_request_error', service_code: 'malformed_request' });
      const poisoned = await service.request('/probe/echo', json('{"name":"x","__proto__":{"admin":true}}'));
      expect(poisoned.status).toBe(400);
      expect(poisoned.body).toMatchObject({ name: 'bad_request_error', service_code: 'malformed_request' });
    });

    it('renders an oversized body as 413 payload_too_large', async () => {
      const res = await service.request('/probe/echo', json({ name: 'x'.repeat(DEFAULT_BODY_LIMIT.bytes) }));
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ code: 413, name: 'invalid_request_error', service_code: 'payload_too_large' });
    });

    it('renders a body of another media type as an invalid request', async () => {
      const res = await service.request('/probe/echo', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'name=x',
      });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 415, name: 'invalid_request_error' });
    });

    it('renders unexpected errors as 500 server_error without internals', async () => {
      const res = await service.request('/probe/boom');
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ code: 500, name: 'server_error' });
      expect(Object.keys(res.body).sort()).toEqual(['code', 'message', 'name']);
      expect(res.text).not.toMatch(/hunter2|10\.0\.0\.7|secret\.ts|at /);
    });

    it('renders domain errors with their service code and details', async () => {
      const res = await service.request('/probe/conflict');
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        code: 409,
        name: 'conflict_error',
        service_code: 'idempotency_key_reused',
        message: 'Idempotency-Key reused with another body',
        context: { key: 'k1' },
      });
    });
  });

  describe('validation', () => {
    it('transforms a valid body into its DTO', async () => {
      const res = await service.request('/probe/echo', json({ name: 'Ada', count: 2 }));
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ received: { name: 'Ada', count: 2 }, is_dto: true });
    });

    it('names the offending field', async () => {
      const res = await service.request('/probe/echo', json({ name: '', count: -1 }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 400, name: 'invalid_request_error', service_code: 'invalid_request' });
      expect(res.body.message).toMatch(/name: name must be longer than or equal to 1 characters/);
      expect(res.body.message).toMatch(/count: count must not be less than 0/);
    });

    it('names nested fields by path', async () => {
      const res = await service.request('/probe/echo', json({ name: 'x', nested: { items: [{ id: 'not-a-uuid' }] } }));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/nested\.items\[0\]\.id: id must be a UUID/);
    });

    it('refuses unknown fields and a missing required one', async () => {
      const res = await service.request('/probe/echo', json({ nam: 'typo' }));
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/nam: unknown field/);
      expect(res.body.message).toMatch(/name: name must be a string/);
    });
  });

  describe('Service-API-Version', () => {
    it('is required where an operation asks for it', async () => {
      const res = await service.request('/probe/versioned');
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'missing_version_header' });
    });

    it.each(['2020-9-17', '2020-13-01', '2021-02-30', 'yesterday', '3020-01-01'])('refuses %s', async (version) => {
      const res = await service.request('/probe/versioned', { headers: { 'service-api-version': version } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ name: 'invalid_request_error', service_code: 'invalid_version_header' });
    });

    it('accepts a valid date', async () => {
      const res = await service.request('/probe/versioned', { headers: { 'Service-API-Version': '2020-09-17' } });
      expect(res.status).toBe(200);
    });

    it("takes the family SDKs' Finch-API-Version as an alias, with the same rules", async () => {
      expect((await service.request('/probe/versioned', { headers: { 'Finch-API-Version': '2020-09-17' } })).status).toBe(200);
      const bad = await service.request('/probe/versioned', { headers: { 'finch-api-version': '2020-13-01' } });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ service_code: 'invalid_version_header', message: expect.stringMatching(/^Finch-API-Version must be a date/) });
      const unknown = await service.request('/probe/versioned', { headers: { 'finch-api-version': '2099-01-01' } });
      expect(unknown.body).toMatchObject({ service_code: 'invalid_version_header', message: expect.stringMatching(/known versions: 2020-09-17/) });
      const both = { 'service-api-version': '2020-09-17', 'finch-api-version': '2020-09-17' };
      expect((await service.request('/probe/versioned', { headers: both })).status).toBe(200);
    });

    it('refuses the two headers naming different versions, or a bad one beside a good one', async () => {
      for (const headers of [
        { 'service-api-version': '2020-09-17', 'finch-api-version': '2021-02-30' },
        { 'service-api-version': 'yesterday', 'finch-api-version': '2020-09-17' },
      ]) {
        const res = await service.request('/probe/versioned', { headers });
        expect(res.status).toBe(400);
        expect(res.body.service_code).toBe('invalid_version_header');
      }
    });

    it('is not required elsewhere', async () => {
      expect((await service.request('/probe/open')).status).toBe(200);
    });
  });

  describe('request ids', () => {
    it('mints one per request', async () => {
      const [a, b] = await Promise.all([service.request('/probe/open'), service.request('/probe/open')]);
      expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    });

    it("keeps the caller's id, and replaces an unsafe one", async () => {
      const kept = await service.request('/no/route', { headers: { 'x-request-id': 'trace-abc.123' } });
      expect(kept.headers.get('x-request-id')).toBe('trace-abc.123');
      const replaced = await service.request('/probe/open', { headers: { 'x-request-id': 'bad id\twith spaces' } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('operations endpoints', () => {
    it('answers liveness and readiness', async () => {
      expect((await service.request('/health/live')).body).toEqual({ status: 'ok' });
      const ready = await service.request('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details.database.status).toBe('up');
      expect(ready.body.details.kafka).toBeUndefined();
    });

    it('exposes Prometheus metrics by route template', async () => {
      await service.request('/probe/open');
      const res = await service.request('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/plain/);
      expect(res.text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/probe\/open",status_code="200"\} \d+/);
      expect(res.text).toMatch(/process_resident_memory_bytes/);
    });

    it('serves the OpenAPI document and the docs page', async () => {
      const spec = await service.request('/docs/openapi.json');
      expect(spec.status).toBe(200);
      expect(spec.body.openapi).toMatch(/^3\./);
      expect(Object.keys(spec.body.paths)).toContain('/probe/echo');
      expect(spec.body.components.schemas.EchoDto.required).toContain('name');
      const page = await service.request('/docs');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      expect(page.text).toMatch(/swagger-ui/i);
    });

    it('sends security headers', async () => {
      const res = await service.request('/health/live');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    });
  });
});
