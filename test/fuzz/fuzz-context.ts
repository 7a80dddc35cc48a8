import { DataSource } from 'typeorm';
import { IssuedCredentials } from '../../src/modules/applications/applications.service';
import { basic, bearer, createApplication } from '../utils/connect';
import { insertDiscrepancy } from '../utils/discrepancy-fixtures';
import { expectEventually } from '../utils/expect-eventually';
import { startTestService, TestResponse, TestService } from '../utils/test-app';
import type { EmployerKind } from './arbitraries';
import type { EmployerTargets, FuzzRoute, FuzzTargets } from './route-catalogue';

export const OPS_USER = 'ops';
export const OPS_PASSWORD = 'ops-password-for-tests';
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

const basicOf = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * The running service with real data behind every route: an application, an Automated and an
 * Assisted sandbox employer with benefits, enrollments, jobs, rules and payments, ops tasks,
 * sagas, a dead letter, a policy, connect-page flow tokens, a revoked token, and a disposable
 * connection for the routes that end a connection's use.
 */
export class FuzzContext {
  disposable: EmployerTargets;
  revokedToken: string;
  ops: FuzzTargets['ops'];
  connect: FuzzTargets['connect'];
  webhooks: FuzzTargets['webhooks'];

  private constructor(
    readonly service: TestService,
    readonly application: IssuedCredentials,
    readonly automated: EmployerTargets,
    readonly assisted: EmployerTargets,
  ) {}

  static async start(): Promise<FuzzContext> {
    const service = await startTestService({
      env: {
        // Thousands of requests a minute on one token, and wrong ops credentials on purpose.
        RATE_LIMIT_PER_MINUTE: '1000000',
        OPS_SIGN_IN_MAX_FAILURES: '1000',
        OPS_SIGN_IN_LOCKOUT_SECONDS: '1',
      },
    });
    try {
      const application = await createApplication(service);
      const setup = new Setup(service, application);
      const automated = await setup.employer('sandbox_automated', 6);
      const assisted = await setup.employer('sandbox_assisted', 4);
      const context = new FuzzContext(service, application, automated, assisted);
      // Before the jobs below, so that their completions queue deliveries.
      const endpoints = await setup.webhookEndpoints();
      await setup.fill(automated);
      await setup.fill(assisted);
      context.disposable = await setup.employer('sandbox_automated', 2);
      const revoked = await setup.employer('sandbox_automated', 1);
      await setup.call('POST', '/disconnect', { headers: bearer(revoked.token) }, 200);
      context.revokedToken = revoked.token;
      await setup.hrisEvents(automated);
      await setup.policy(automated);
      await setup.discrepancies([automated, assisted]);
      context.ops = await setup.opsIds();
      context.webhooks = { ...endpoints, deliveryIds: await setup.webhookDeliveryIds(endpoints.endpointIds[0]) };
      context.connect = await setup.connectFlow();
      return context;
    } catch (error) {
      await service.close();
      throw error;
    }
  }

  get host(): string {
    return new URL(this.service.url).hostname;
  }

  get port(): number {
    return Number(new URL(this.service.url).port);
  }

  get applicationAuthorization(): string {
    return basicOf(this.application.client_id, this.application.client_secret);
  }

  get opsAuthorization(): string {
    return basicOf(OPS_USER, OPS_PASSWORD);
  }

  targets(route: FuzzRoute, kind: EmployerKind): FuzzTargets {
    const employer = route.disposable ? this.disposable : kind === 'assisted' ? this.assisted : this.automated;
    return {
      employer,
      application: { clientId: this.application.client_id, clientSecret: this.application.client_secret },
      connect: this.connect,
      ops: this.ops,
      webhooks: this.webhooks,
    };
  }

  /** Whether a connection still answers as connected, with every entity active. */
  async usable(employer: EmployerTargets): Promise<boolean> {
    const res = await this.service.request('/introspect', { headers: bearer(employer.token) });
    return (
      res.status === 200 &&
      res.body?.connection_status?.status === 'connected' &&
      (res.body.entities as { status: string }[]).every((e) => e.status !== 'disconnected')
    );
  }

  /** A fresh disposable connection once a case has used the current one up. */
  async renewDisposableIfUsed(): Promise<void> {
    if (await this.usable(this.disposable)) return;
    this.disposable = await new Setup(this.service, this.application).employer('sandbox_automated', 2);
  }

  close(): Promise<void> {
    return this.service.close();
  }
}

/** The requests that build the context, each checked for the status it must answer. */
class Setup {
  constructor(
    private readonly service: TestService,
    private readonly application: IssuedCredentials,
  ) {}

  async call(method: string, path: string, init: { headers?: Record<string, string>; body?: unknown; form?: Record<string, string> }, status: number): Promise<TestResponse> {
    const headers: Record<string, string> = { ...init.headers };
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    } else if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const res = await this.service.request(path, { method, headers, body, redirect: 'manual' });
    if (res.status !== status) throw new Error(`fuzz setup: ${method} ${path} answered ${res.status} (expected ${status}): ${res.text.slice(0, 500)}`);
    return res;
  }

  async employer(providerId: string, employeeSize: number): Promise<EmployerTargets> {
    const created = await this.call('POST', '/sandbox/connections', { headers: basic(this.application), body: { provider_id: providerId, employee_size: employeeSize } }, 200);
    const token: string = created.body.access_token;
    const directory = await this.call('GET', '/employer/directory', { headers: bearer(token) }, 200);
    const groups = await this.call('GET', '/employer/pay-groups', { headers: bearer(token) }, 200);
    return {
      token,
      connectionId: created.body.connection_id,
      entityId: created.body.entity_id,
      companyId: created.body.company_id,
      individualIds: directory.body.individuals.map((i: { id: string }) => i.id),
      benefitIds: [],
      jobIds: [],
      ruleIds: [],
      payGroupIds: groups.body.map((g: { id: string }) => g.id),
      paymentIds: [],
    };
  }

  /** A benefit with an enrollment, jobs, rules and a payment. */
  async fill(employer: EmployerTargets): Promise<void> {
    const headers = bearer(employer.token);
    const created = await this.call(
      'POST',
      '/employer/benefits',
      { headers, body: { type: '401k', description: 'Fuzz plan', frequency: 'every_paycheck', company_contribution: { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] } } },
      200,
    );
    employer.benefitIds.push(created.body.benefit_id);
    employer.jobIds.push(created.body.job_id);
    const automated = (await this.call('GET', '/introspect', { headers }, 200)).body.manual === false;
    if (automated) {
      await expectEventually(async () => {
        const job = await this.call('GET', `/jobs/automated/${created.body.job_id}`, { headers }, 200);
        if (job.body.status !== 'complete') throw new Error(`benefit job ${job.body.status}`);
      });
      const sync = await this.service.request('/jobs/automated', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'data_sync_all' }) });
      if (sync.body?.job_id) employer.jobIds.push(sync.body.job_id);
    }
    const enrolled = await this.call(
      'POST',
      `/employer/benefits/${created.body.benefit_id}/individuals`,
      { headers, body: employer.individualIds.slice(0, 2).map((individual_id) => ({ individual_id, configuration: { employee_deduction: { type: 'percent', amount: 300 } } })) },
      200,
    );
    employer.jobIds.push(enrolled.body.job_id);
    for (const value of ['401k', '403b', 's125_medical']) {
      const rule = await this.call(
        'POST',
        '/employer/pay-statement-item/rule',
        { headers, body: { conditions: [{ field: 'type', operator: 'equals', value }], attributes: { metadata: { gl_code: value } } } },
        201,
      );
      employer.ruleIds.push(rule.body.id);
    }
    const payment = await this.call('POST', '/sandbox/payment', { headers, body: {} }, 200);
    employer.paymentIds.push(payment.body.payment_id);
  }

  /** A new hire (a saga) and a poison event (a dead letter). */
  async hrisEvents(employer: EmployerTargets): Promise<void> {
    const envelope = (id: string, type: string, data: Record<string, unknown>) => ({
      id,
      type,
      version: 1,
      occurred_at: new Date().toISOString(),
      connection_id: employer.connectionId,
      entity_id: employer.entityId,
      data,
    });
    const today = new Date().toISOString().slice(0, 10);
    await this.call('POST', '/hris/events', { headers: basic(this.application), body: envelope('2f1c6d0e-0b7a-4c55-9a51-0e3c2f6b7a10', 'EmployeeHired', { individual_id: employer.individualIds[2], start_date: today }) }, 200);
    await this.call('POST', '/hris/events', { headers: basic(this.application), body: envelope('5a0e3b7c-1d2f-4e6a-8b9c-7d1e2f3a4b5c', 'EmployeePromoted', { individual_id: employer.individualIds[3] }) }, 200);
  }

  async policy(employer: EmployerTargets): Promise<void> {
    await this.call(
      'POST',
      '/ops/api/policies',
      {
        headers: { authorization: basicOf(OPS_USER, OPS_PASSWORD) },
        body: {
          connection_id: employer.connectionId,
          entity_id: employer.entityId,
          benefit_id: employer.benefitIds[0],
          configuration: { employee_deduction: { type: 'percent', amount: 300 } },
          waiting_period_days: 30,
        },
      },
      200,
    );
  }

  /** Open discrepancies of each employer's benefit and people, as the reconciliation job writes them (one the service applied, one it did not). */
  async discrepancies(employers: EmployerTargets[]): Promise<void> {
    const db = this.service.app.get(DataSource);
    for (const employer of employers) {
      for (const [i, kind] of [[0, 'amount_mismatch'], [3, 'unexpected']] as const) {
        await insertDiscrepancy(db, {
          connectionId: employer.connectionId,
          entityId: employer.entityId,
          benefitId: employer.benefitIds[0],
          individualId: employer.individualIds[i],
          kind,
          openedAt: new Date(),
        });
      }
    }
  }

  /** Endpoints at a port nobody answers on: their deliveries fail and stay to be read and resent. */
  async webhookEndpoints(): Promise<Omit<FuzzTargets['webhooks'], 'deliveryIds'>> {
    const create = async (event_types?: string[]) =>
      (await this.call('POST', '/webhooks/endpoints', { headers: basic(this.application), body: { url: 'http://127.0.0.1:9/fuzz', event_types } }, 201)).body.id as string;
    return { endpointIds: [await create()], deletableEndpointIds: [await create(['account.updated']), await create(['account.updated'])] };
  }

  async webhookDeliveryIds(endpointId: string): Promise<string[]> {
    return expectEventually(async () => {
      const res = await this.call('GET', `/webhooks/endpoints/${endpointId}/deliveries`, { headers: basic(this.application) }, 200);
      const ids = (res.body.data as { id: string }[]).map((d) => d.id);
      if (ids.length === 0) throw new Error('fuzz setup: no webhook delivery yet');
      return ids;
    });
  }

  async opsIds(): Promise<FuzzTargets['ops']> {
    const list = async (path: string, id: string) => {
      const res = await this.call('GET', path, { headers: { authorization: basicOf(OPS_USER, OPS_PASSWORD) } }, 200);
      return (res.body.data as Record<string, string>[]).map((row) => row[id]);
    };
    const ops = {
      taskIds: await list('/ops/api/tasks', 'task_id'),
      sagaIds: await list('/ops/api/sagas', 'saga_id'),
      jobIds: await list('/ops/api/jobs', 'job_id'),
      deadLetterIds: await list('/ops/api/dead-letters', 'dead_letter_id'),
      connectionIds: await list('/ops/api/connections', 'connection_id'),
      policyIds: await list('/ops/api/policies', 'policy_id'),
      discrepancyIds: await list('/ops/api/discrepancies', 'discrepancy_id'),
    };
    for (const [name, ids] of Object.entries(ops)) {
      if (ids.length === 0 || ids.some((id) => typeof id !== 'string')) throw new Error(`fuzz setup: no ${name} from the ops API`);
    }
    return ops;
  }

  /** Flow tokens for each step of the hosted connect page, read from its forms. */
  async connectFlow(): Promise<FuzzTargets['connect']> {
    const session = await this.call(
      'POST',
      '/connect/sessions',
      { headers: basic(this.application), body: { customer_id: 'fuzz-flow', customer_name: 'Fuzz Flow Corp', products: ['company', 'directory'], redirect_uri: REDIRECT_URI } },
      201,
    );
    const flowOf = (html: string) => {
      const match = /name="flow" value="([^"]+)"/.exec(html);
      if (!match) throw new Error(`fuzz setup: no flow token in the connect page: ${html.slice(0, 300)}`);
      return match[1].replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
    };
    const start = await this.call('GET', `/connect?session=${session.body.session_id}`, {}, 200);
    const providerFlow = flowOf(start.text);
    const signIn = await this.call('POST', '/connect/provider', { form: { flow: providerFlow, provider: 'sandbox_automated' } }, 200);
    const signInFlow = flowOf(signIn.text);
    const consent = await this.call('POST', '/connect/sign-in', { form: { flow: signInFlow, username: 'good_user', password: 'good_pass' } }, 200);
    return { sessionId: session.body.session_id, providerFlow, signInFlow, consentFlow: flowOf(consent.text), entityName: 'Fuzz Flow Corp' };
  }
}
