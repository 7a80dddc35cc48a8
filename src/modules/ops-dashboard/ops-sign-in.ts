import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { OpsCredentials, resolveOpsCredentials } from '../../config/ops-credentials';
import { invalidRequest } from '../../domain/shared/domain-error';
import { areOpsCredentials, basicCredentialsOf } from '../ops-auth/ops-credentials.guard';
import { OpsSignInThrottle, SignInAttempt } from '../ops-auth/ops-sign-in-throttle';

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
 * counts wrong credentials against the same per-address, per-username and per-device limits
 * (429 once one is used up), and hands out the same device token on success.
 */
@Injectable()
export class OpsSignInCheck {
  private credentials: OpsCredentials | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly throttle: OpsSignInThrottle,
  ) {}

  /**
   * `client`: the client's address and device token (signInClientOf), whose failed tries are
   * counted. `deviceToken`: on success, the token to answer with (Ops-Device-Token).
   */
  check(authorization: string | undefined, client: Omit<SignInAttempt, 'username'>): { answer: SignInAnswer; deviceToken?: string } {
    const given = basicCredentialsOf(authorization);
    if (given === undefined) {
      throw invalidRequest('Send the credentials to check as Authorization: Basic base64(username:password)');
    }
    const attempt = { ...client, username: given.username };
    // Resolved on first use, as the guard does: on the embedded default this may generate the password.
    this.throttle.assertAllowed(attempt);
    this.credentials ??= resolveOpsCredentials(this.config);
    if (!areOpsCredentials(given, this.credentials)) {
      this.throttle.failed(attempt);
      return { answer: { signed_in: false, message: 'The username or password is not right.' } };
    }
    return { answer: { signed_in: true, username: given.username }, deviceToken: this.throttle.succeeded(attempt) };
  }
}
