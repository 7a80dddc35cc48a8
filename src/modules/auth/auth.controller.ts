import { Body, Controller, Headers, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBasicAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { AnswerIsSingleUseSecret } from '../../infrastructure/http/idempotency/secret-answers';
import { ClientAddress, clientAddressOf } from '../../infrastructure/http/client-address';
import { publicBaseUrl } from '../../infrastructure/http/public-url';
import { ApplicationsService } from '../applications/applications.service';
import { clientCredentialsOf } from '../applications/client-credentials';
import { ConnectSession, ConnectSessionsService } from './connect-sessions.service';
import { ConnectSessionResponseDto, CreateConnectSessionDto, MAX_MINUTES_TO_EXPIRE, ReauthenticateSessionDto } from './dto/connect-session.dto';
import { ExchangeCodeDto, TokenResponseDto } from './dto/token.dto';
import { TokenExchangeService } from './token-exchange.service';

@ApiTags('auth')
@Controller()
export class AuthController {
  constructor(
    private readonly config: AppConfig,
    private readonly applications: ApplicationsService,
    private readonly sessions: ConnectSessionsService,
    private readonly tokens: TokenExchangeService,
  ) {}

  @Post('connect/sessions')
  @ApiOperation({ summary: 'Create a connect session' })
  @ApiBasicAuth('client-credentials')
  @ApiCreatedResponse({ type: ConnectSessionResponseDto })
  async createSession(
    @Body() body: CreateConnectSessionDto,
    @Headers('authorization') authorization: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<ConnectSessionResponseDto> {
    const credentials = clientCredentialsOf(authorization, body, { allowBody: true });
    const application = await this.applications.authenticate(credentials.clientId, credentials.clientSecret, clientAddressOf(request));
    const session = await this.sessions.createSession(application, {
      customerId: body.customer_id,
      customerName: body.customer_name,
      customerEmail: body.customer_email ?? null,
      products: body.products,
      redirectUri: body.redirect_uri ?? null,
      sandbox: body.sandbox ?? null,
      manual: body.manual ?? false,
      providerId: body.integration?.provider ?? null,
      authMethod: body.integration?.auth_method ?? null,
      minutesToExpire: body.minutes_to_expire ?? MAX_MINUTES_TO_EXPIRE,
    });
    return this.sessionResponse(session, request);
  }

  @Post('connect/sessions/reauthenticate')
  @ApiOperation({ summary: 'Create a reauthentication session for an existing connection' })
  @ApiBasicAuth('client-credentials')
  @ApiCreatedResponse({ type: ConnectSessionResponseDto })
  async reauthenticate(
    @Body() body: ReauthenticateSessionDto,
    @Headers('authorization') authorization: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<ConnectSessionResponseDto> {
    const credentials = clientCredentialsOf(authorization, body, { allowBody: false });
    const application = await this.applications.authenticate(credentials.clientId, credentials.clientSecret, clientAddressOf(request));
    const session = await this.sessions.reauthenticate(application, body.connection_id, {
      customerId: null,
      customerName: null,
      customerEmail: null,
      products: body.products,
      redirectUri: body.redirect_uri ?? null,
      sandbox: null,
      manual: false,
      providerId: null,
      authMethod: null,
      minutesToExpire: body.minutes_to_expire ?? MAX_MINUTES_TO_EXPIRE,
    });
    return this.sessionResponse(session, request);
  }

  @Post('auth/token')
  @HttpCode(200)
  // A code is single-use: a retry with an Idempotency-Key is a second use of it (refused, and it
  // revokes the token), never a replay of a token kept in clear. No cache keeps the answer either.
  @AnswerIsSingleUseSecret()
  @ApiOperation({ summary: 'Exchange an authorization code for an access token' })
  @ApiOkResponse({ type: TokenResponseDto })
  async exchange(@Body() body: ExchangeCodeDto, @ClientAddress() from: string): Promise<TokenResponseDto> {
    const application = await this.applications.authenticate(body.client_id, body.client_secret, from);
    return this.tokens.exchange(application, body.code, body.redirect_uri);
  }

  private sessionResponse(session: ConnectSession, request: FastifyRequest): ConnectSessionResponseDto {
    return { session_id: session.id, connect_url: `${publicBaseUrl(this.config, request)}/connect?session=${session.id}` };
  }
}
