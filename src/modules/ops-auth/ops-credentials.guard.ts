import { createHash, timingSafeEqual } from 'node:crypto';
import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppConfig } from '../../config/app-config';
import { OpsCredentials, resolveOpsCredentials } from '../../config/ops-credentials';
import { DomainError } from '../../domain/shared/domain-error';
import { clientAddressOf } from '../../infrastructure/http/client-address';
import { deviceTokenOf, OPS_DEVICE_HEADER } from './ops-device-token';
import { OpsSignInThrottle, SignInAttempt } from './ops-sign-in-throttle';

type OpsRequest = FastifyRequest & { opsUser?: string };

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest();
/** Equal-length digests compared in constant time: neither content nor length leaks through timing. */
const sameSecret = (given: string, expected: string) => timingSafeEqual(sha256(given), sha256(expected));

/** Whether given credentials are the ops credentials: both halves always compared, in constant time. */
export function areOpsCredentials(given: { username: string; password: string } | undefined, expected: OpsCredentials): boolean {
  const userMatches = given !== undefined && sameSecret(given.username, expected.username);
  const passwordMatches = given !== undefined && sameSecret(given.password, expected.password);
  return userMatches && passwordMatches;
}

/**
 * The ops API's own credentials: HTTP Basic with OPS_USERNAME/OPS_PASSWORD. Nothing else is
 * accepted here, an employer's bearer token least of all. Wrong credentials count against the
 * client's address, the username given and the device token sent, if any (OpsSignInThrottle);
 * once one has used up its tries the request is refused with 429. A success answers with the
 * device's token (Ops-Device-Token), which the client sends back from then on.
 */
@Injectable()
export class OpsCredentialsGuard implements CanActivate {
  private credentials: OpsCredentials | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly throttle: OpsSignInThrottle,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<OpsRequest>();
    const reply = http.getResponse<FastifyReply>();
    const given = basicCredentialsOf(request.headers.authorization);
    // A request without credentials is not a guess: it only learns that they are needed.
    const attempt = given && { ...signInClientOf(request), username: given.username };
    if (attempt) this.throttle.assertAllowed(attempt);
    // Resolved on first use: on the embedded default this may generate and store the password.
    this.credentials ??= resolveOpsCredentials(this.config);
    // Both halves are always compared, so a right username takes no longer to refuse than a wrong one.
    if (!areOpsCredentials(given, this.credentials) || !attempt) {
      if (attempt) this.throttle.failed(attempt);
      void reply.header('www-authenticate', 'Basic realm="ops", charset="UTF-8"');
      throw new DomainError(
        'authentication_error',
        given === undefined
          ? 'The ops API needs the ops credentials: Authorization: Basic <ops username:password>'
          : 'The ops credentials are not valid',
        { serviceCode: given === undefined ? 'missing_ops_credentials' : 'invalid_ops_credentials' },
      );
    }
    void reply.header(OPS_DEVICE_HEADER, this.throttle.succeeded(attempt));
    request.opsUser = attempt.username;
    return true;
  }
}

/** Who is trying: the client's address and the device token it sent (the sign-in limits count a try by them and its username). */
export function signInClientOf(request: FastifyRequest): Omit<SignInAttempt, 'username'> {
  return { address: clientAddressOf(request), deviceToken: deviceTokenOf(request) };
}

export function basicCredentialsOf(header: string | undefined): { username: string; password: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]{1,1024})\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The ops username the guard authenticated (recorded as `resolved_by`). */
export const OpsUser = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const user = context.switchToHttp().getRequest<OpsRequest>().opsUser;
  if (user === undefined) throw new Error('OpsUser used on an operation without OpsCredentialsGuard');
  return user;
});
