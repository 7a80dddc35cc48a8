import { Connection } from '../domain/connections/connection';
import { ConnectionEntity } from '../domain/connections/entity-scope';

/** The employer an HRIS event is about, resolved and checked before a saga sees it. */
export interface HrisScope {
  connection: Connection;
  entity: ConnectionEntity;
}
