import type { LoggerService } from '@nestjs/common';
import { QuietBootLogger } from './quiet-boot-logger';

describe('QuietBootLogger', () => {
  const calls: [string, unknown[]][] = [];
  const inner: LoggerService = {
    log: (...args: unknown[]) => void calls.push(['log', args]),
    error: (...args: unknown[]) => void calls.push(['error', args]),
    warn: (...args: unknown[]) => void calls.push(['warn', args]),
    debug: (...args: unknown[]) => void calls.push(['debug', args]),
  };
  const logger = new QuietBootLogger(inner);
  beforeEach(() => (calls.length = 0));

  it.each(['RouterExplorer', 'RoutesResolver', 'InstanceLoader', 'NestFactory', 'NestApplication'])('moves %s lines to debug', (context) => {
    logger.log('Mapped {/x, GET} route', context);
    expect(calls).toEqual([['debug', ['Mapped {/x, GET} route', context]]]);
  });

  it("keeps the service's own lines, and every warning and error, where they were", () => {
    logger.log('outbox relay started', 'OutboxRelay');
    logger.log('no context');
    logger.warn('careful', 'RouterExplorer');
    logger.error('failed', 'stack', 'InstanceLoader');
    expect(calls.map(([level]) => level)).toEqual(['log', 'log', 'warn', 'error']);
  });
});
