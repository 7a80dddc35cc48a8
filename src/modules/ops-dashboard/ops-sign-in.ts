import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { OpsCredentials, resolveOpsCredentials } from '../../config/ops-credentials';
import { invalidRequest } from '../../domain/shared/domain-error';
import { areOpsCredentials, basicCredentialsOf } from '../ops-auth/ops-credentials.guard';
import { OpsSignInThrottle } from '../ops-auth/ops-sign-in-throttle';

export interface SignInAnswer {
  signed_in: boolean;
  /** The ops username, when signed in. */
  username?: string;
  message?: string;
}

/**
 * Tells the dashboard's sign-in form whether typed credentials are the ops credentials. It
 * answers 200 either way, so a mistyped password is a message on the form rather than a failed
 * request in the browser; the ops API itself still answers 401 to wrong credentials. It
 * compares as OpsCredentialsGuard does: both halves, constant time, on equal-length digests,
 * and counts wrong credentials against the same per-address and per-username limits (429 once
 * one is used up).
 */
@Injectable()
export class OpsSignInCheck {
  private credentials: OpsCredentials | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly throttle: OpsSignInThrottle,
  ) {}

  /** `address`: the client's, whose failed tries are counted. */
  check(authorization: string | undefined, address: string): SignInAnswer {
    const given = basicCredentialsOf(authorization);
    if (given === undefined) {
      throw invalidRequest('Send the credentials to check as Authorization: Basic base64(username:password)');
    }
    // Resolved on first use, as the guard does: on the embedded default this may generate the password.
    this.throttle.assertAllowed(address, given.username);
    this.credentials ??= resolveOpsCredentials(this.config);
    if (!areOpsCredentials(given, this.credentials)) {
      this.throttle.failed(address, given.username);
      return { signed_in: false, message: 'The username or password is not right.' };
    }
    this.throttle.succeeded(address);
    return { signed_in: true, username: given.username };
  }
}
