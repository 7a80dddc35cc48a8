import { Controller, Get, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { publicBaseUrl } from '../../infrastructure/http/public-url';
import { GUSTO_CALLBACK_PATH } from '../../infrastructure/providers/gusto/gusto-connection';
import { ConnectFlowService, Fields, FlowOutcome } from './connect-flow.service';
import { ConnectPageErrorFilter } from './connect-page-error.filter';
import { sendPage, sendRedirect } from './page-response';

/** The routes that take HTML form posts (application/x-www-form-urlencoded). */
export const FORM_ROUTES = ['/connect/provider', '/connect/sign-in', '/connect/consent'] as const;

const fieldsOf = (value: unknown): Fields => (typeof value === 'object' && value !== null ? (value as Fields) : {});

function send(reply: FastifyReply, outcome: FlowOutcome): void {
  if ('redirect' in outcome) sendRedirect(reply, outcome.redirect);
  else sendPage(reply, outcome.page);
}

/**
 * The hosted connect page: server-rendered HTML for employers' browsers. Not part of the
 * JSON API, so it is left out of the OpenAPI document and renders its own error pages.
 */
@ApiExcludeController()
@UseFilters(ConnectPageErrorFilter)
@Controller()
export class ConnectPageController {
  constructor(
    private readonly flow: ConnectFlowService,
    private readonly config: AppConfig,
  ) {}

  @Get('connect')
  async start(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.flow.start(fieldsOf(request.query), publicBaseUrl(this.config, request)));
  }

  @Post('connect/provider')
  async chooseProvider(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.flow.chooseProvider(fieldsOf(request.body), publicBaseUrl(this.config, request)));
  }

  @Post('connect/sign-in')
  async signIn(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendPage(reply, await this.flow.signIn(fieldsOf(request.body)));
  }

  @Post('connect/consent')
  async consent(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.flow.consent(fieldsOf(request.body)));
  }

  /** Gusto's authorize page sends the employer back here (GustoOAuthStep). */
  @Get(GUSTO_CALLBACK_PATH.slice(1))
  async gustoCallback(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.flow.gustoCallback(fieldsOf(request.query), publicBaseUrl(this.config, request)));
  }

  /** `{connect_base_url}/authorize`; `/authorize` is kept as an alias. */
  @Get(['connect/authorize', 'authorize'])
  async authorize(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    sendRedirect(reply, await this.flow.authorize(fieldsOf(request.query), publicBaseUrl(this.config, request)));
  }
}
