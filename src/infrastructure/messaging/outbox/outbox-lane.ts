/** Fixed by the migration that seeds outbox_lanes; changing it would reorder pending messages. */
export const OUTBOX_LANE_COUNT = 64;

/** FNV-1a of the key: messages of one key always share a lane and so publish in order. */
export function laneOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % OUTBOX_LANE_COUNT;
}
