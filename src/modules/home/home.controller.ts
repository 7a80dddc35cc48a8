import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { DOCS_PATH } from '../../infrastructure/http/api-docs';
import { publicBaseUrl } from '../../infrastructure/http/public-url';
import { ApplicationsBootstrap } from '../applications/applications.bootstrap';
import { connectLinkOf, SANDBOX_SIGN_IN } from '../applications/demo-connect';
import { homePage } from './home.page';

/** `GET /`: where a person who opens the service's address finds its docs, dashboard and demo. */
@ApiExcludeController()
@Controller()
export class HomeController {
  constructor(
    private readonly config: AppConfig,
    private readonly applications: ApplicationsBootstrap,
  ) {}

  @Get()
  home(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    const base = publicBaseUrl(this.config, request);
    const startup = this.applications.startupApplication;
    const demo =
      startup?.credentials.sandbox === true
        ? { link: connectLinkOf(startup.credentials, base), clientId: startup.credentials.client_id, signIn: SANDBOX_SIGN_IN }
        : undefined;
    void reply
      .status(200)
      .headers({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' })
      .send(homePage({ docs: `/${DOCS_PATH}`, demo }));
  }
}
