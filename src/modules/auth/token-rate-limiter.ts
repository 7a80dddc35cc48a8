import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Clock, CLOCK } from '../../domain/shared/clock';

export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Window {
  start: number;
  count: number;
}

/**
 * Fixed one-minute window per access token, kept in memory: a limit protects this instance,
 * it is not a correctness rule, so several instances each allow the configured rate rather
 * than paying a database write per request.
 */
@Injectable()
export class TokenRateLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly windowMs = 60_000;

  constructor(
    private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  take(tokenId: string): RateLimitDecision {
    const now = this.clock.now().getTime();
    let window = this.windows.get(tokenId);
    if (!window || now - window.start >= this.windowMs) {
      if (this.windows.size > 100_000) this.evictExpired(now);
      window = { start: now, count: 0 };
      this.windows.set(tokenId, window);
    }
    if (window.count >= this.config.RATE_LIMIT_PER_MINUTE) {
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000)) };
    }
    window.count++;
    return { allowed: true };
  }

  private evictExpired(now: number): void {
    for (const [key, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(key);
  }
}
