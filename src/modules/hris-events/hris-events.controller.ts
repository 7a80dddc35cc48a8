import { Body, Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { ApiBasicAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { invalidRequest, malformedRequest } from '../../domain/shared/domain-error';
import { ClientAddress } from '../../infrastructure/http/client-address';
import { ApplicationsService } from '../applications/applications.service';
import { clientCredentialsOf } from '../applications/client-credentials';
import { HrisIntakeResult, HrisIntakeService } from './hris-intake.service';

/** Events one request may carry; more belong on the Kafka topic. */
export const MAX_HRIS_EVENTS_PER_REQUEST = 1_000;

/**
 * `POST /hris/events`: HRIS events over HTTP, for the embedded default (no broker) and for
 * platforms that would rather not run a producer. One event or an array; each is applied
 * through the same inbox and sagas as `hris.events` and answered with its outcome.
 */
@ApiTags('hris')
@Controller('hris/events')
export class HrisEventsController {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly intake: HrisIntakeService,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiBasicAuth('client-credentials')
  @ApiOperation({ summary: 'Apply HRIS events (one or an array): each answers applied, duplicate, dead_lettered or rejected' })
  async publish(
    @Body() body: unknown,
    @ClientAddress() from: string,
    @Headers('authorization') authorization?: string,
  ): Promise<HrisIntakeResult | HrisIntakeResult[]> {
    const credentials = clientCredentialsOf(authorization, undefined, { allowBody: false });
    const application = await this.applications.authenticate(credentials.clientId, credentials.clientSecret, from);
    if (Array.isArray(body)) {
      if (body.length === 0 || body.length > MAX_HRIS_EVENTS_PER_REQUEST) {
        throw invalidRequest(`Invalid request: send 1 to ${MAX_HRIS_EVENTS_PER_REQUEST} events (received ${body.length})`);
      }
      return this.intake.applyAll(application.id, body);
    }
    if (typeof body !== 'object' || body === null) throw malformedRequest(`Expected an event object or an array of events, not ${body === null ? 'null' : typeof body}`);
    return this.intake.apply(application.id, body);
  }
}
