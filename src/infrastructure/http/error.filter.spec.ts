import type { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { QueryFailedError } from 'typeorm';
import { LogSampler } from '../observability/log-sampler';
import { sendError } from './error.filter';

describe('sendError: requests the database turned away', () => {
  const deadlock = () => new QueryFailedError('UPDATE t SET x = 1', [], Object.assign(new Error('deadlock detected'), { code: '40P01' }));
  const lockTimeout = () => new QueryFailedError('UPDATE t SET x = 1', [], Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }));

  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const logger = { warn: (fields: Record<string, unknown>, message: string) => void warnings.push({ fields, message }) } as unknown as Logger;
  const statuses: number[] = [];
  const request = (n: number) => ({ id: `req-${n}`, method: 'POST', url: '/employer/benefits', raw: { destroyed: false } }) as unknown as FastifyRequest;
  const reply = () => {
    const r = { sent: false, status: (code: number) => (statuses.push(code), r), headers: () => r, send: () => r };
    return r as unknown as FastifyReply;
  };
  beforeEach(() => {
    warnings.length = 0;
    statuses.length = 0;
  });

  it('answers every one 429 and logs one warning per cause within the interval, the next telling how many it left out', () => {
    jest.useFakeTimers({ now: 1_000_000 });
    try {
      const sampler = new LogSampler(1_000);
      for (let n = 0; n < 5; n++) sendError(request(n), reply(), deadlock(), logger, sampler);
      sendError(request(5), reply(), lockTimeout(), logger, sampler);
      expect(statuses).toEqual([429, 429, 429, 429, 429, 429]);
      expect(warnings.map((w) => [w.fields.reqId, w.fields.sqlState, w.fields.leftOut])).toEqual([
        ['req-0', '40P01', 0],
        ['req-5', '55P03', 0],
      ]);

      jest.advanceTimersByTime(1_000);
      sendError(request(6), reply(), deadlock(), logger, sampler);
      expect(warnings[2].fields).toMatchObject({ reqId: 'req-6', sqlState: '40P01', leftOut: 4 });
      expect(warnings[2].message).toContain('and 4 more request(s) refused for it since the last such line');
    } finally {
      jest.useRealTimers();
    }
  });
});
