import { Messaging1795392000000 } from './migrations/1795392000000-messaging';

/** Every migration, in order. Listed explicitly so ts-jest, ts-node and the build agree. */
export const MIGRATIONS = [Messaging1795392000000];
