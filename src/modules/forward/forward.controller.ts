import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { AnswerCarriesPersonalData } from '../../infrastructure/http/idempotency/secret-answers';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { ForwardRequestDto } from './dto/forward-request.dto';
import { ForwardService } from './forward.service';

@ApiTags('forward')
@ApiBearerAuth('access-token')
@Controller('forward')
export class ForwardController {
  constructor(private readonly forwarding: ForwardService) {}

  @Post()
  @HttpCode(200)
  @RequiresAccessToken()
  @RequiresApiVersion()
  // The provider's answer may hold anything it keeps about people, SSNs included.
  @AnswerCarriesPersonalData()
  @ApiOperation({
    summary: 'Pass a raw request to the connection’s provider',
    description:
      'The provider’s own answer, including its errors (e.g. 404 for an unknown route), comes back inside a 200 ' +
      'response as `statusCode` (and `response.status_code`). Authorization headers are forwarded but never echoed back.',
  })
  @ApiOkResponse({
    description:
      '{ statusCode, headers, data (the provider’s body as text), request: { method, route, data, headers, params }, ' +
      'response: { data (parsed), headers, status_code } }',
  })
  forward(@CurrentPrincipal() { connection }: Principal, @CurrentEntity() entity: ConnectionEntity, @Body() body: ForwardRequestDto) {
    return this.forwarding.forward(connection, entity, {
      method: body.method,
      route: body.route,
      data: body.data,
      // null reads as absent, as everywhere in the API.
      headers: body.headers ?? undefined,
      params: body.params ?? undefined,
    });
  }
}
