import { InboundMessage } from '../../infrastructure/messaging/message';
import { HrisEventsConsumer } from './hris-events.consumer';

/** When an HRIS event says it was sent: what the inbox searches for its earlier copies from. */
describe('HrisEventsConsumer.sentAtOf', () => {
  // sentAtOf reads the message alone: none of the consumer's collaborators is needed.
  const consumer = new HrisEventsConsumer(undefined as never, undefined as never, undefined as never, undefined as never);
  const message = (value: string): InboundMessage => ({ topic: 'hris.events', key: null, value, headers: {} });

  it("is the event's occurred_at", () => {
    expect(consumer.sentAtOf(message(JSON.stringify({ id: 'e1', occurred_at: '2026-03-01T09:30:00Z' })))).toEqual(new Date('2026-03-01T09:30:00Z'));
    expect(consumer.sentAtOf(message(JSON.stringify({ id: 'e2', occurred_at: '2026-03-01T09:30:00.250+01:30' })))).toEqual(new Date('2026-03-01T08:00:00.250Z'));
  });

  it.each([
    ['no occurred_at', JSON.stringify({ id: 'e3' })],
    ['a date without a time', JSON.stringify({ id: 'e4', occurred_at: '2026-03-01' })],
    ['a time that is no instant', JSON.stringify({ id: 'e5', occurred_at: '2026-02-30T09:30:00Z' })],
    ['a number', JSON.stringify({ id: 'e6', occurred_at: 1772357400000 })],
    ['a body that is not JSON', '{"id": "e7", "occurred_at": '],
    ['a body that is not an object', '["2026-03-01T09:30:00Z"]'],
  ])('is unknown (every day is searched) for %s', (_, value) => {
    expect(consumer.sentAtOf(message(value))).toBeUndefined();
  });
});
