import { CompanyRecord, EmploymentRecord, IndividualRecord, PaymentRecord, PayStatementRecord } from '../../../domain/employer/unified-records';
import { EmployerRef, ForwardRequest, Page } from '../../../domain/providers/provider-port';
import { SandboxEmployerStore } from './sandbox-employer.store';
import { SandboxNativeApi } from './sandbox-native-api';

const REF: EmployerRef = {
  connectionId: 'c',
  entityId: 'e',
  entityName: 'Acme',
  providerId: 'sandbox_automated',
  authenticationType: 'credential',
  employeeSize: 3,
};

const ADDRESS = { line1: '1 Main St', line2: null, city: 'Austin', state: 'TX', postal_code: '78701', country: 'US' };
const ids = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'];
const PAYMENT_ID = '00000000-0000-4000-8000-0000000000aa';

const company: CompanyRecord = {
  id: '00000000-0000-4000-8000-0000000000cc',
  legal_name: 'Acme',
  entity: { type: 'corporation', subtype: 's_corporation' },
  ein: '12-3456789',
  primary_email: 'admin@acme.example',
  primary_phone_number: '+14155550123',
  departments: [
    { name: 'Engineering', parent: null },
    { name: 'Platform', parent: { name: 'Engineering' } },
  ],
  locations: [ADDRESS],
  accounts: [{ routing_number: '021000021', account_name: 'Payroll', institution_name: 'Chase', account_type: 'checking', account_number: '000123456789' }],
};

const individual = (id: string, n: number): IndividualRecord => ({
  id,
  first_name: `First${n}`,
  middle_name: null,
  last_name: `Last${n}`,
  preferred_name: null,
  emails: [{ data: `p${n}@acme.example`, type: 'work' }],
  phone_numbers: [],
  gender: 'female',
  ethnicity: 'asian',
  marital_status: 'single',
  dob: '1990-01-01',
  residence: ADDRESS,
  ssn: '123-45-6789',
});

const employment = (id: string, n: number): EmploymentRecord => ({
  id,
  first_name: `First${n}`,
  middle_name: null,
  last_name: `Last${n}`,
  title: 'Engineer',
  manager: n === 0 ? null : { id: ids[0] },
  department: { name: 'Platform' },
  employment: { type: 'employee', subtype: 'full_time' },
  start_date: '2024-01-01',
  end_date: n === 2 ? '2026-01-01' : null,
  is_active: n !== 2,
  class_code: null,
  location: ADDRESS,
  income: { unit: 'hourly', amount: 4_550, currency: 'usd', effective_date: '2024-01-01' },
  income_history: [],
  work_email: `p${n}@acme.example`,
  pay_group_ids: [],
});

const payment: PaymentRecord = {
  id: PAYMENT_ID,
  pay_date: '2026-05-22',
  debit_date: '2026-05-20',
  pay_period: { start_date: '2026-05-02', end_date: '2026-05-15' },
  company_debit: { amount: 300, currency: 'usd' },
  gross_pay: { amount: 200, currency: 'usd' },
  net_pay: { amount: 150, currency: 'usd' },
  employer_taxes: { amount: 20, currency: 'usd' },
  employee_taxes: { amount: 40, currency: 'usd' },
  individual_ids: [ids[0], ids[1]],
  pay_group_ids: [],
  pay_frequencies: ['bi_weekly'],
};

const statement = (individualId: string): PayStatementRecord => ({
  individual_id: individualId,
  type: 'regular_payroll',
  payment_method: 'direct_deposit',
  total_hours: 80,
  gross_pay: { amount: 100, currency: 'usd' },
  net_pay: { amount: 75, currency: 'usd' },
  earnings: [{ type: 'wage', name: 'Regular', amount: 100, currency: 'usd', hours: 80 }],
  taxes: [{ type: 'fica', name: 'Social Security', employer: true, amount: 6, currency: 'usd' }],
  employee_deductions: [{ name: '401k', amount: 5, currency: 'usd', pre_tax: true, type: '401k' }],
  employer_contributions: [],
});

/** The store methods the native API reads, over in-memory records. */
class FakeStore {
  readonly calls: string[] = [];
  private readonly individuals_ = ids.map(individual);
  private readonly employments_ = ids.map(employment);

  async company() {
    return company;
  }
  async directory(_ref: EmployerRef, page: Page) {
    this.calls.push(`directory ${page.limit} ${page.offset}`);
    const items = this.employments_.slice(page.offset, page.offset + page.limit).map((e) => ({ id: e.id }));
    return { count: ids.length, offset: page.offset, items };
  }
  async individuals(_ref: EmployerRef, wanted: string[]) {
    return this.individuals_.filter((i) => wanted.includes(i.id));
  }
  async employments(_ref: EmployerRef, wanted: string[]) {
    return this.employments_.filter((e) => wanted.includes(e.id));
  }
  async payments(_ref: EmployerRef, from: string, to: string) {
    this.calls.push(`payments ${from} ${to}`);
    return payment.pay_date >= from && payment.pay_date <= to ? [payment] : [];
  }
  async payment(_ref: EmployerRef, id: string) {
    return id === PAYMENT_ID ? payment : undefined;
  }
  async payStatements(_ref: EmployerRef, id: string, page: Page) {
    if (id !== PAYMENT_ID) return undefined;
    return { count: 2, offset: page.offset, items: payment.individual_ids.map(statement).slice(page.offset, page.offset + page.limit) };
  }
}

describe('SandboxNativeApi', () => {
  let store: FakeStore;
  let api: SandboxNativeApi;
  const call = (request: Partial<ForwardRequest>) => api.handle(REF, { method: 'GET', route: '/', ...request });

  beforeEach(() => {
    store = new FakeStore();
    api = new SandboxNativeApi(store as unknown as SandboxEmployerStore);
  });

  it('maps the company to the provider’s own fields, never showing a whole account number', async () => {
    const res = await call({ route: '/company' });
    expect(res.status_code).toBe(200);
    expect(res.data).toEqual({
      companyId: company.id,
      legalName: 'Acme',
      taxId: '12-3456789',
      entityType: 'CORPORATION',
      entitySubtype: 'S_CORPORATION',
      adminEmail: 'admin@acme.example',
      phone: '+14155550123',
      departments: [
        { name: 'Engineering', parentName: null },
        { name: 'Platform', parentName: 'Engineering' },
      ],
      workLocations: [{ street1: '1 Main St', street2: null, city: 'Austin', region: 'TX', postalCode: '78701', countryCode: 'US' }],
      bankAccounts: [{ routingNumber: '021000021', nickname: 'Payroll', bankName: 'Chase', accountType: 'CHECKING', accountNumberLast4: '6789' }],
    });
    expect(JSON.stringify(res.data)).not.toContain('000123456789');
  });

  it('answers JSON with a fresh provider request id on every call', async () => {
    const [a, b] = [await call({ route: '/company' }), await call({ route: '/nowhere' })];
    expect(a.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(b.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(a.headers['x-sandbox-request-id']).not.toBe(b.headers['x-sandbox-request-id']);
  });

  it('maps an employee, with status, pay rate and only the last four of the SSN', async () => {
    const res = await call({ route: `/employees/${ids[2]}` });
    expect(res.data).toMatchObject({
      employeeId: ids[2],
      givenName: 'First2',
      familyName: 'Last2',
      managerId: ids[0],
      departmentName: 'Platform',
      workerType: 'EMPLOYEE',
      employmentType: 'FULL_TIME',
      hireDate: '2024-01-01',
      terminationDate: '2026-01-01',
      status: 'TERMINATED',
      payRate: { unit: 'HOUR', cents: 4_550, currency: 'USD', effectiveDate: '2024-01-01' },
      ssnLast4: '6789',
      workEmail: 'p2@acme.example',
    });
    expect(JSON.stringify(res.data)).not.toContain('123-45-6789');
  });

  it('pages employees from the directory, defaulting to page 1 of 25', async () => {
    expect((await call({ route: '/employees' })).data).toMatchObject({ page: 1, perPage: 25, total: 3, totalPages: 1 });
    expect(store.calls).toEqual(['directory 25 0']);
    const second = await call({ route: '/employees?per_page=2', params: { page: 2 } });
    expect(store.calls[1]).toBe('directory 2 2');
    expect(second.data).toMatchObject({ page: 2, perPage: 2, total: 3, totalPages: 2 });
    expect((second.data as { employees: { employeeId: string }[] }).employees.map((e) => e.employeeId)).toEqual([ids[2]]);
  });

  it('lets params override the route’s own query string', async () => {
    await call({ route: '/employees?page=5', params: { page: '1' } });
    expect(store.calls).toEqual(['directory 25 0']);
  });

  it('defaults pay runs to the whole history and checks the dates', async () => {
    expect((await call({ route: '/payruns' })).data).toEqual({ payRuns: [expect.objectContaining({ payRunId: PAYMENT_ID, checkDate: '2026-05-22' })] });
    expect(store.calls).toEqual(['payments 0001-01-01 9999-12-31']);
    expect((await call({ route: '/payruns?from=2026-06-01' })).data).toEqual({ payRuns: [] });
    const bad = await call({ route: '/payruns?to=2026-02-30' });
    expect(bad).toMatchObject({ status_code: 400, data: { error: 'bad_request', message: 'to must be a date YYYY-MM-DD' } });
  });

  it('maps paystubs: codes in capitals, who paid each tax, pre-tax deductions', async () => {
    const res = await call({ route: `/payruns/${PAYMENT_ID}/paystubs`, params: { per_page: 1 } });
    expect(res.data).toEqual({
      payRunId: PAYMENT_ID,
      page: 1,
      perPage: 1,
      total: 2,
      totalPages: 2,
      paystubs: [
        {
          employeeId: ids[0],
          runType: 'REGULAR',
          paymentMethod: 'DIRECT_DEPOSIT',
          hoursWorked: 80,
          grossCents: 100,
          netCents: 75,
          currency: 'USD',
          earnings: [{ code: 'WAGE', label: 'Regular', cents: 100, hours: 80 }],
          taxes: [{ code: 'FICA', label: 'Social Security', paidBy: 'EMPLOYER', cents: 6 }],
          deductions: [{ code: '401K', label: '401k', cents: 5, preTax: true }],
          employerContributions: [],
        },
      ],
    });
  });

  it.each([
    ['/nowhere', 'No route GET /nowhere'],
    ['/', 'No route GET /'],
    ['/employees/a/b/c', 'No route GET /employees/a/b/c'],
    ['/Company', 'No route GET /Company'],
  ])('answers %s with its own 404', async (route, message) => {
    expect(await call({ route })).toMatchObject({ status_code: 404, data: { error: 'not_found', message } });
  });

  it('answers a method a route lacks with 405 and Allow', async () => {
    const res = await call({ method: 'PUT', route: `/employees/${ids[0]}` });
    expect(res).toMatchObject({
      status_code: 405,
      data: { error: 'method_not_allowed', message: `PUT is not allowed on /employees/${ids[0]}; allowed: GET` },
      headers: { allow: 'GET' },
    });
  });

  it('ignores a trailing slash and a fragment, and decodes path segments', async () => {
    expect((await call({ route: '/company/' })).status_code).toBe(200);
    expect((await call({ route: '/company#top' })).status_code).toBe(200);
    expect((await call({ route: `/employees/${encodeURIComponent(ids[1])}` })).status_code).toBe(200);
    expect(await call({ route: '/employees/%E0%A4%A' })).toMatchObject({ status_code: 400, data: { error: 'bad_request' } });
  });

  it('refuses query parameters a route does not take, and repeated or structured ones', async () => {
    expect((await call({ route: '/company?x=1' })).data).toEqual({ error: 'bad_request', message: 'Unknown query parameter x (accepted: none)' });
    expect((await call({ route: '/employees', params: { page: { n: 1 } } })).status_code).toBe(400);
    expect((await call({ route: '/employees?per_page=1&per_page=2' })).status_code).toBe(400);
    expect((await call({ route: '/employees?per_page=101' })).status_code).toBe(400);
    expect((await call({ route: '/employees?page=-1' })).status_code).toBe(400);
    // Absent values are as good as not sent.
    expect((await call({ route: '/employees', params: { page: null } })).status_code).toBe(200);
  });
});
