import { Injectable } from '@nestjs/common';
import { sandboxLogin } from '../../domain/connections/sandbox-login';
import { isAssisted, PRODUCTS, ProviderDescriptor } from '../../domain/providers/provider';
import { ProviderCatalogue } from '../../domain/providers/provider-catalogue';
import { DomainError, invalidRequest } from '../../domain/shared/domain-error';
import { ConnectionsRepository } from '../../infrastructure/database/repositories/connections.repository';
import { MAX_ORIGIN_LENGTH } from '../../domain/applications/application-origins';
import { ApplicationsService } from '../applications/applications.service';
import { assertRegisteredRedirectUri, ConnectSession, ConnectSessionsService } from '../auth/connect-sessions.service';
import { Page } from './connect-page.layout';
import {
  embeddedResultPage,
  EmbeddedResult,
  EntityChoice,
  FlowContext,
  ProviderOption,
  providerStep,
  reviewStep,
  signInStep,
  Step,
} from './connect-page.views';
import { FlowState, FlowStateSigner, invalidFlowState } from './flow-state';
import { GustoOAuthStep } from './gusto-oauth-step';
import { openerOrigin, originNotRegistered } from './opener-origin';

/** A step either renders a page or sends the browser on (303). */
export type FlowOutcome = { page: Page } | { redirect: string };

/** Where the flow's answer goes: a redirect to redirect_uri, or a message to the opener on `origin`. */
type Delivery = { redirectUri: string } | { origin: string };

/** Query or form fields as Fastify parses them (repeated names become arrays). */
export type Fields = Record<string, unknown>;

/** `/authorize` starts an interactive flow: the session only has to outlive one sitting. */
const AUTHORIZE_SESSION_MINUTES = 60;
const MAX_STATE_LENGTH = 2000;

/**
 * The hosted connect flow, step by step: provider → sandbox sign-in → review and consent.
 * Every POST re-reads the session (it must still be open) and trusts only the signed flow
 * state for what earlier steps decided. A production session's Gusto signs in at Gusto instead
 * (GustoOAuthStep): the provider step redirects there, and its callback leads to the review.
 */
@Injectable()
export class ConnectFlowService {
  constructor(
    private readonly sessions: ConnectSessionsService,
    private readonly applications: ApplicationsService,
    private readonly catalogue: ProviderCatalogue,
    private readonly connections: ConnectionsRepository,
    private readonly signer: FlowStateSigner,
    private readonly gustoOAuth: GustoOAuthStep,
  ) {}

  /** `GET /connect?session=…`: the provider list, or sign-in when the provider is already known. */
  async start(query: Fields, baseUrl: string): Promise<FlowOutcome> {
    const sessionId = field(query, 'session', { max: 100 });
    if (sessionId === undefined) throw invalidRequest('This link is missing its session. Open the link the application gave you.');
    const state = field(query, 'state', { max: MAX_STATE_LENGTH }) ?? null;
    const givenOrigin = field(query, 'origin', { max: MAX_ORIGIN_LENGTH });
    const session = await this.sessions.findOpen(sessionId);
    // Settled here, before any step, and carried signed: a later step cannot swap it.
    const base = { sessionId, state, origin: await this.openerOriginFor(session, givenOrigin) };
    const fixed = this.fixedProvider(session);
    if (fixed) return this.providerChosen(session, { ...base, providerId: fixed.id, authMethod: authMethodFor(fixed, session) }, baseUrl);
    const context = await this.context(session, base);
    const search = field(query, 'q', { max: 200 }) ?? '';
    const matching = new Set(this.catalogue.search(search).map((p) => p.id));
    const unavailable = await this.gustoOAuth.unavailableProviders(session);
    return {
      page: providerStep(context, {
        providers: this.catalogue.list().map((p) => toOption(p, matching.has(p.id), unavailable.get(p.id))),
        query: search,
        hidden: { session: sessionId, state: base.state, origin: base.origin },
      }),
    };
  }

  /** `POST /connect/provider`: the employer picked a provider. */
  async chooseProvider(form: Fields, baseUrl: string): Promise<FlowOutcome> {
    const flow = this.signer.verify(form.flow);
    const session = await this.sessions.findOpen(flow.sessionId);
    const provider = this.fixedProvider(session) ?? this.catalogue.find(field(form, 'provider', { max: 100 }) ?? '');
    if (!provider) throw invalidRequest('That provider is not available. Go back and choose one from the list.', 'provider_not_found');
    return this.providerChosen(session, { ...carried(flow), providerId: provider.id, authMethod: authMethodFor(provider, session) }, baseUrl);
  }

  /** `GET /connect/oauth/gusto/callback`: back from Gusto's authorize page, on to the review (or access_denied). */
  async gustoCallback(query: Fields, baseUrl: string): Promise<FlowOutcome> {
    const outcome = await this.gustoOAuth.callback(query, baseUrl);
    if (outcome.denied) return this.denied(outcome.session, outcome.flow, await this.deliveryOf(outcome.session, outcome.flow));
    return { page: await this.reviewPage(outcome.session, outcome.flow, {}) };
  }

  /** `POST /connect/sign-in`: sandbox credentials; a wrong password shows the form again. */
  async signIn(form: Fields): Promise<Page> {
    const flow = this.signer.verify(form.flow);
    const session = await this.sessions.findOpen(flow.sessionId);
    const { provider, authMethod } = this.signedProvider(session, flow);
    await this.gustoOAuth.refuseSandboxSignIn(session, provider.id);
    const username = field(form, 'username', { max: 200 }) ?? '';
    const password = field(form, 'password', { max: 200 }) ?? '';
    const signedIn = { ...carried(flow), providerId: provider.id, authMethod };
    if (username.trim() === '' || password === '') {
      return this.signInPage(session, signedIn, { username, error: 'Enter both your username and your password.' });
    }
    let entityNames: string[];
    try {
      ({ entityNames } = sandboxLogin(username, password, employerNameOf(session, provider)));
    } catch (error) {
      // A rejected sign-in is an answer for the employer, not a failure of the page.
      if (error instanceof DomainError && error.family === 'authentication_error') {
        return this.signInPage(session, signedIn, { username, error: `${error.message}. Check them and try again.` });
      }
      throw error;
    }
    return this.reviewPage(session, { ...signedIn, entityNames }, {});
  }

  /** `POST /connect/consent`: Allow completes the session and issues the code; Deny returns access_denied. */
  async consent(form: Fields): Promise<FlowOutcome> {
    const verified = this.signer.verify(form.flow);
    if (!verified.entityNames) throw invalidFlowState();
    const flow = { ...verified, entityNames: verified.entityNames };
    const session = await this.sessions.findOpen(flow.sessionId);
    const { provider, authMethod } = this.signedProvider(session, flow);
    const delivery = await this.deliveryOf(session, flow);
    const alongside = await this.gustoOAuth.completion(session, flow);
    const decision = field(form, 'decision', { max: 10 });
    if (decision === 'deny') {
      await this.gustoOAuth.discard(session.id);
      return this.denied(session, flow, delivery);
    }
    if (decision !== 'allow') throw invalidRequest('Choose Allow or Deny.');

    const picked = new Set(list(form, 'entity'));
    const reauthentication = session.kind === 'reauthenticate';
    // One entity needs no choice (no checkbox is shown); otherwise only names the signed
    // sign-in result holds count, so a forged field cannot add an entity.
    const chosen =
      !reauthentication && flow.entityNames.length === 1 ? flow.entityNames : flow.entityNames.filter((n) => picked.has(n));
    if (!reauthentication && chosen.length === 0) {
      return { page: await this.reviewPage(session, flow, { picked, error: 'Choose at least one entity to connect.' }) };
    }
    const choice = { providerId: provider.id, authenticationType: authMethod, manual: isAssisted(provider, authMethod), entityNames: chosen };
    const completed = await this.sessions.complete(session.id, choice, alongside);
    if ('redirectUri' in delivery) return { redirect: withQuery(delivery.redirectUri, { code: completed.code, state: flow.state }) };
    const success: EmbeddedResult = { type: 'connect:success', code: completed.code, state: flow.state };
    return { page: embeddedResultPage(await this.applicationName(session), success, delivery.origin) };
  }

  /**
   * `GET /connect/authorize` (and `/authorize`): checks the application and its registered
   * redirect_uri before anything else, so a bad request never redirects anywhere, then starts
   * a session and returns where the flow continues.
   */
  async authorize(query: Fields, baseUrl: string): Promise<string> {
    const clientId = field(query, 'client_id', { max: 200 });
    if (clientId === undefined) throw invalidRequest('client_id is required.');
    const application = await this.applications.find(clientId);
    if (!application) throw invalidRequest('Unknown client_id: no application is registered with it.', 'invalid_client');
    const redirectUri = field(query, 'redirect_uri', { max: 2000 });
    assertRegisteredRedirectUri(application, redirectUri);
    const products = productsOf(field(query, 'products', { max: 500 }));
    const sandbox = field(query, 'sandbox', { max: 20 });
    if (sandbox !== undefined && sandbox !== 'finch' && sandbox !== 'provider') {
      throw invalidRequest('sandbox must be finch or provider.');
    }
    if (application.sandbox && sandbox === undefined) {
      throw invalidRequest('sandbox is required for a sandbox application (sandbox=finch or sandbox=provider).');
    }
    const state = field(query, 'state', { max: MAX_STATE_LENGTH }) ?? null;
    // The embedded flow's origin is checked before a session exists, like redirect_uri.
    const givenOrigin = field(query, 'origin', { max: MAX_ORIGIN_LENGTH });
    const origin = redirectUri ? null : openerOrigin(application.allowedOrigins, givenOrigin);
    const session = await this.sessions.createAuthorizeSession(application, {
      customerId: null,
      customerName: null,
      customerEmail: null,
      products,
      redirectUri: redirectUri ?? null,
      sandbox: sandbox ?? null,
      manual: false,
      providerId: null,
      authMethod: null,
      minutesToExpire: AUTHORIZE_SESSION_MINUTES,
    });
    return `${baseUrl}${connectPath({ sessionId: session.id, state, origin })}`;
  }

  /** After the provider is known: Gusto's authorize page for a production Gusto session, else the sandbox sign-in. */
  private async providerChosen(session: ConnectSession, flow: Omit<FlowState, 'issuedAt'>, baseUrl: string): Promise<FlowOutcome> {
    const redirect = await this.gustoOAuth.begin(session, flow, baseUrl);
    return redirect ? { redirect } : { page: await this.signInPage(session, flow, {}) };
  }

  private async denied(session: ConnectSession, flow: Omit<FlowState, 'issuedAt'>, delivery: Delivery): Promise<FlowOutcome> {
    const description = 'The employer denied access';
    if ('redirectUri' in delivery) {
      const query = { error: 'access_denied', error_description: description, state: flow.state };
      return { redirect: withQuery(delivery.redirectUri, query) };
    }
    const result: EmbeddedResult = { type: 'connect:error', error: 'access_denied', error_description: description, state: flow.state };
    return { page: embeddedResultPage(await this.applicationName(session), result, delivery.origin) };
  }

  /** The embedded flow's target origin, from the link; none for a redirect flow, which does not use it. */
  private async openerOriginFor(session: ConnectSession, given: string | undefined): Promise<string | null> {
    if (session.redirectUri) return null;
    const application = await this.applications.find(session.applicationId);
    return openerOrigin(application?.allowedOrigins ?? [], given);
  }

  /**
   * Where the answer goes: the session's redirect_uri, else the signed origin, which must still
   * be registered (the application may have removed it since the first step).
   */
  private async deliveryOf(session: ConnectSession, flow: Omit<FlowState, 'issuedAt'>): Promise<Delivery> {
    if (session.redirectUri) return { redirectUri: session.redirectUri };
    if (flow.origin === null) throw invalidFlowState();
    const application = await this.applications.find(session.applicationId);
    if (!application?.allowedOrigins.includes(flow.origin)) throw originNotRegistered(flow.origin);
    return { origin: flow.origin };
  }

  /** The provider is decided by the session for an `integration` or a reauthentication. */
  private fixedProvider(session: ConnectSession): ProviderDescriptor | undefined {
    if (session.providerId === null) return undefined;
    const provider = this.catalogue.find(session.providerId);
    if (!provider) {
      throw invalidRequest(`This connect link names a provider (${session.providerId}) that is not available.`, 'provider_not_found');
    }
    return provider;
  }

  /** The provider and method the signed state carries; they must agree with the session's, if it fixes one. */
  private signedProvider(
    session: ConnectSession,
    flow: Omit<FlowState, 'issuedAt'>,
  ): { provider: ProviderDescriptor; authMethod: string } {
    if (!flow.providerId || !flow.authMethod) throw invalidFlowState();
    if (session.providerId !== null && session.providerId !== flow.providerId) throw invalidFlowState();
    const provider = this.catalogue.find(flow.providerId);
    if (!provider) throw invalidFlowState();
    return { provider, authMethod: flow.authMethod };
  }

  private async context(session: ConnectSession, flow: Omit<FlowState, 'issuedAt'>): Promise<FlowContext> {
    const steps: Step[] = session.providerId !== null ? ['sign-in', 'review'] : ['provider', 'sign-in', 'review'];
    return {
      applicationName: await this.applicationName(session),
      flowToken: this.signer.sign(flow),
      restartUrl: connectPath(flow),
      steps,
    };
  }

  private async applicationName(session: ConnectSession): Promise<string> {
    return (await this.applications.find(session.applicationId))?.name ?? 'The application';
  }

  private async signInPage(
    session: ConnectSession,
    flow: Omit<FlowState, 'issuedAt'>,
    input: { username?: string; error?: string },
  ): Promise<Page> {
    const { provider } = this.signedProvider(session, flow);
    return signInStep(await this.context(session, flow), {
      providerName: provider.display_name,
      username: input.username,
      error: input.error,
      canChangeProvider: session.providerId === null,
    });
  }

  private async reviewPage(
    session: ConnectSession,
    flow: Omit<FlowState, 'issuedAt'> & { entityNames: string[] },
    input: { picked?: Set<string>; error?: string },
  ): Promise<Page> {
    const { provider, authMethod } = this.signedProvider(session, flow);
    const reauthentication = session.kind === 'reauthenticate';
    let entities: EntityChoice[];
    if (reauthentication) {
      const connection = session.connectionId ? await this.connections.find(session.connectionId) : undefined;
      const existing = connection?.entities ?? [];
      const known = new Set(existing.map((e) => e.name));
      entities = [
        ...existing.map((e): EntityChoice => ({ name: e.name, existing: e.status, checked: true })),
        // Adding an entity is opt-in when reconnecting.
        ...flow.entityNames.filter((n) => !known.has(n)).map((name) => ({ name, checked: input.picked?.has(name) ?? false })),
      ];
    } else {
      entities = flow.entityNames.map((name) => ({ name, checked: input.picked ? input.picked.has(name) : true }));
    }
    return reviewStep(await this.context(session, flow), {
      providerName: provider.display_name,
      products: session.products,
      unavailableProducts: unavailableProducts(provider, authMethod, session.products),
      entities,
      reauthentication,
      returnHost: session.redirectUri ? new URL(session.redirectUri).host : null,
      openerHost: !session.redirectUri && flow.origin !== null ? new URL(flow.origin).host : null,
      error: input.error,
      // Allow and Deny answer with a redirect to redirect_uri, which the page's CSP must permit.
      formTargets: session.redirectUri ? [new URL(session.redirectUri).origin] : [],
    });
  }
}

function toOption(provider: ProviderDescriptor, matches: boolean, unavailable: string | undefined): ProviderOption {
  return {
    id: provider.id,
    name: provider.display_name,
    assisted: provider.authentication_methods.every((m) => isAssisted(provider, m.type)),
    color: provider.primary_color,
    matches,
    unavailable,
  };
}

function unavailableProducts(provider: ProviderDescriptor, authMethod: string, requested: string[]): string[] {
  const offered: string[] = provider.authentication_methods.find((m) => m.type === authMethod)?.products ?? provider.products;
  return requested.filter((p) => !offered.includes(p));
}

/** The session's requested method when the provider offers it, else the provider's first. */
function authMethodFor(provider: ProviderDescriptor, session: ConnectSession): string {
  const methods = provider.authentication_methods.map((m) => m.type as string);
  if (session.authMethod !== null && methods.includes(session.authMethod)) return session.authMethod;
  if (session.authMethod !== null) {
    throw invalidRequest(`${provider.display_name} does not offer the ${session.authMethod} sign-in this link asks for.`);
  }
  return methods[0];
}

/** The sandbox names the employer's entities after the customer, else after the provider. */
function employerNameOf(session: ConnectSession, provider: ProviderDescriptor): string {
  return session.customerName ?? `${provider.display_name} sandbox employer`;
}

function carried(flow: FlowState): Omit<FlowState, 'issuedAt'> {
  return { sessionId: flow.sessionId, state: flow.state, origin: flow.origin };
}

/** `/connect?session=…` with the state and origin the link came with. */
function connectPath(flow: { sessionId: string; state: string | null; origin: string | null }): string {
  const query = new URLSearchParams({ session: flow.sessionId });
  if (flow.state !== null) query.set('state', flow.state);
  if (flow.origin !== null) query.set('origin', flow.origin);
  return `/connect?${query.toString()}`;
}

function withQuery(uri: string, params: Record<string, string | null>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return url.toString();
}

/** One text value of a query or form field; a repeated field is a bad request. */
function field(fields: Fields, name: string, { max }: { max: number }): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidRequest(`${name} must be given once.`);
  if (value.length > max) throw invalidRequest(`${name} is too long (at most ${max} characters).`);
  return value;
}

/** Every value of a repeatable form field (checkboxes). */
function list(fields: Fields, name: string): string[] {
  const value = fields[name];
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values.filter((v): v is string => typeof v === 'string');
}

function productsOf(value: string | undefined): string[] {
  const products = [...new Set((value ?? '').split(/\s+/).filter((p) => p !== ''))];
  if (products.length === 0) throw invalidRequest(`products is required: a space-separated list of ${PRODUCTS.join(', ')}.`);
  const unknown = products.filter((p) => !(PRODUCTS as readonly string[]).includes(p));
  if (unknown.length > 0) throw invalidRequest(`Unknown product${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}; products are ${PRODUCTS.join(', ')}.`);
  return products;
}
