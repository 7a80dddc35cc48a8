import { DomainError } from '../shared/domain-error';

/**
 * Sign-in at a sandbox provider. The sandbox accepts published test credentials, so a
 * developer can walk the whole connect flow: one employer with one entity, or with several.
 */
export const SANDBOX_CREDENTIALS = [
  { username: 'good_user', password: 'good_pass', entities: 1 },
  { username: 'multi_entity_user', password: 'good_pass', entities: 3 },
] as const;

const ENTITY_SUFFIXES = ['', ' West', ' Holdings', ' Services', ' Labs'];

export function sandboxLogin(username: string, password: string, employerName: string): { entityNames: string[] } {
  const account = SANDBOX_CREDENTIALS.find((c) => c.username === username.trim());
  if (!account || account.password !== password) {
    throw new DomainError('authentication_error', 'Incorrect username or password for this provider', {
      serviceCode: 'invalid_provider_credentials',
    });
  }
  return { entityNames: ENTITY_SUFFIXES.slice(0, account.entities).map((suffix) => `${employerName}${suffix}`) };
}
