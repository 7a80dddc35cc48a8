import { Controller, Get, Headers, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/domain-error';
import { signInClientOf } from '../ops-auth/ops-credentials.guard';
import { OPS_DEVICE_HEADER } from '../ops-auth/ops-device-token';
import { DashboardAssetName, DashboardAssets } from './dashboard-assets';
import { dashboardPage } from './ops-dashboard.page';
import { OpsSignInCheck, SignInAnswer } from './ops-sign-in';

/** The loaded assets, or why they could not be loaded (the service runs on without the dashboard). */
export const DASHBOARD_ASSETS = Symbol('DASHBOARD_ASSETS');
export type LoadedDashboardAssets = DashboardAssets | Error;

/**
 * Only this service's own script, style and API: no inline code, nothing from elsewhere, no
 * framing, and no native form submission (the script sends the sign-in form itself, so a
 * password can never end up in a URL).
 */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The ops dashboard (`/ops`): a static page, its script and style. It holds no data; every datum
 * comes from /ops/api with the ops credentials. Not part of the JSON API's OpenAPI document.
 */
@ApiExcludeController()
@Controller('ops')
export class OpsDashboardController {
  constructor(
    @Inject(DASHBOARD_ASSETS) private readonly assets: LoadedDashboardAssets,
    private readonly signIn: OpsSignInCheck,
  ) {}

  @Get()
  page(@Res() reply: FastifyReply): void {
    const assets = this.available();
    void reply
      .status(200)
      .headers({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', 'content-security-policy': PAGE_CSP })
      .send(dashboardPage(assets));
  }

  @Get('assets/dashboard.js')
  script(@Res() reply: FastifyReply): void {
    this.sendAsset(reply, 'dashboard.js');
  }

  @Get('assets/dashboard.css')
  style(@Res() reply: FastifyReply): void {
    this.sendAsset(reply, 'dashboard.css');
  }

  /** Whether the Basic credentials sent are the ops credentials: 200 either way (see OpsSignInCheck). */
  @Post('session')
  @HttpCode(200)
  session(
    @Headers('authorization') authorization: string | undefined,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): SignInAnswer {
    void reply.header('cache-control', 'no-store');
    const { answer, deviceToken } = this.signIn.check(authorization, signInClientOf(request));
    if (deviceToken !== undefined) void reply.header(OPS_DEVICE_HEADER, deviceToken);
    return answer;
  }

  private sendAsset(reply: FastifyReply, name: DashboardAssetName): void {
    const asset = this.available()[name];
    void reply.status(200).headers({ 'content-type': asset.contentType, 'cache-control': 'no-cache' }).send(asset.body);
  }

  private available(): DashboardAssets {
    if (this.assets instanceof Error) {
      throw new DomainError('server_error', `The ops dashboard is not available: ${this.assets.message}`, { serviceCode: 'dashboard_unavailable' });
    }
    return this.assets;
  }
}
