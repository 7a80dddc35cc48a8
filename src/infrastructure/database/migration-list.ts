import { Messaging1795392000000 } from './migrations/1795392000000-messaging';
import { Connections1795400000000 } from './migrations/1795400000000-connections';

/** Every migration, in order. Listed explicitly so ts-jest, ts-node and the build agree. */
export const MIGRATIONS = [Messaging1795392000000, Connections1795400000000];
