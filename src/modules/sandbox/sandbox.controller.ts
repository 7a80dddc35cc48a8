import { Body, Controller, Headers, HttpCode, Post, Put } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ApplicationsService } from '../applications/applications.service';
import { ClientAddress } from '../../infrastructure/http/client-address';
import { clientCredentialsOf } from '../applications/client-credentials';
import { CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { CreateSandboxAccountDto, CreateSandboxConnectionDto, UpdateSandboxAccountDto } from './dto/sandbox-connection.dto';
import { SandboxConnectionsService } from './sandbox-connections.service';
import { AnswerCarriesSecret } from '../../infrastructure/http/idempotency/secret-answers';

@ApiTags('sandbox')
@Controller('sandbox/connections')
export class SandboxController {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly sandbox: SandboxConnectionsService,
  ) {}

  @Post()
  @HttpCode(200)
  // An Idempotency-Key replay answers the connection without its token, which is kept only hashed.
  @AnswerCarriesSecret('access_token')
  @ApiBasicAuth('client-credentials')
  @ApiOperation({ summary: 'Create a sandbox connection with a ready access token' })
  async createConnection(@Body() body: CreateSandboxConnectionDto, @ClientAddress() from: string, @Headers('authorization') authorization?: string) {
    const credentials = clientCredentialsOf(authorization, undefined, { allowBody: false });
    const application = await this.applications.authenticate(credentials.clientId, credentials.clientSecret, from);
    return this.sandbox.createConnection(application, {
      providerId: body.provider_id,
      authenticationType: body.authentication_type,
      employeeSize: body.employee_size,
      products: body.products ?? undefined, // null reads as absent
    });
  }

  @Post('accounts')
  @HttpCode(200)
  @AnswerCarriesSecret('access_token')
  @ApiBasicAuth('client-credentials')
  @ApiOperation({ summary: 'Create a new account (and token) for an existing sandbox company' })
  async createAccount(@Body() body: CreateSandboxAccountDto, @ClientAddress() from: string, @Headers('authorization') authorization?: string) {
    const credentials = clientCredentialsOf(authorization, undefined, { allowBody: false });
    const application = await this.applications.authenticate(credentials.clientId, credentials.clientSecret, from);
    return this.sandbox.createAccount(application, {
      companyId: body.company_id,
      providerId: body.provider_id,
      authenticationType: body.authentication_type,
      products: body.products ?? undefined, // null reads as absent
    });
  }

  @Put('accounts')
  @RequiresAccessToken()
  @ApiBearerAuth('access-token')
  @ApiOperation({ summary: 'Force the connection status of the token’s sandbox account (e.g. reauth)' })
  updateAccount(@CurrentPrincipal() { connection }: Principal, @Body() body: UpdateSandboxAccountDto) {
    return this.sandbox.updateAccount(connection, body.connection_status);
  }
}
