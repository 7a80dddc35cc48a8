import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { EmploymentRecord, employmentViewOf } from '../../../domain/employer/unified-records';
import { taxTreatmentOf } from '../../../domain/payroll/benefit-tax-treatment';
import { BENEFIT_TYPES } from '../../../domain/providers/provider';
import { ProviderBenefit, ProviderEnrollmentConfiguration } from '../../../domain/providers/provider-port';
import { DomainError } from '../../../domain/shared/domain-error';
import { OpenApiContract } from '../../../../test/utils/openapi-contract';
import { Json, loadPublicDocument, PublicResponseValidator, toJsonSchema } from '../../../../test/utils/public-openapi';
import {
  basisPointsOfPercent,
  BENEFIT_TYPES_GUSTO_LACKS,
  benefitTypesByName,
  centsOf,
  companyBenefitBodyOf,
  companyRecordOf,
  directoryEntryOf,
  dollarsOf,
  employeeBenefitBodyOf,
  employmentRecordOf,
  enrollmentConfigurationOf,
  GUSTO_BENEFIT_TYPES,
  GUSTO_BENEFIT_TYPES_WITHOUT_UNIFIED_TYPE,
  gustoBenefitTypeOf,
  GustoMappedBenefitType,
  individualRecordOf,
  matchOf,
  payFrequencyOf,
  payGroupRecordOf,
  paymentRecordOf,
  payStatementRecordsOf,
  percentOf,
  providerBenefitOf,
  taxTypeOf,
  UNIFIED_BENEFIT_TYPES_BY_GUSTO_ID,
  unifiedBenefitTypeOf,
} from './gusto-mapping';
import {
  GustoCompany,
  GustoCompanyBenefit,
  GustoEmployee,
  GustoEmployeeBenefit,
  GustoEmployeeBenefitCreateBody,
  GustoEmployeeBenefitUpdateBody,
  GustoEmployeeCompensation,
  GustoLocation,
  GustoPayroll,
  GustoPaySchedule,
} from './gusto-types';

/**
 * The mapping is held to both contracts: every Gusto request body it writes is checked against
 * Gusto's API document, every Gusto object it reads is first checked to be what that document
 * answers (its own examples where they are valid), and every unified record it produces is
 * checked against the public document of the Unified API.
 */
const gusto = OpenApiContract.fromFile(path.resolve(__dirname, '../../../../test/fixtures/gusto-openapi.yaml'), 'gusto');
const unified = new PublicResponseValidator(toJsonSchema(loadPublicDocument()));
const HEADERS = { authorization: 'Bearer x', 'x-gusto-api-version': '2026-02-01' };

const COMPANY = 'c7a07c73-a703-4462-9343-1b181182b6e0';
const EMPLOYEE = '4b3f930f-82cd-48a8-b797-798686e12e5e';
const COMPANY_BENEFIT = '54e37c27-43e6-4ae5-a5b2-e29895a133be';
const EMPLOYEE_BENEFIT = 'e91ca856-a915-4339-9b18-29f9cd66b031';
const BENEFIT_ID = '0b5e3a52-8f59-4d55-9a53-2a1c1c3f0d11';

/** An example of one of the document's shared responses (components.responses). */
function responseExample<T = Json>(response: string, label: string): T {
  return structuredClone(gusto.document.components.responses[response].content['application/json'].examples[label].value);
}

/** An example a schema gives itself (components.schemas.*.x-examples). */
function schemaExample<T = Json>(schema: string, label: string): T {
  return structuredClone(gusto.document.components.schemas[schema]['x-examples'][label]);
}

function postEmployeeBenefit(body: unknown): string[] {
  return gusto.checkRequest({ method: 'POST', path: `/v1/employees/${EMPLOYEE}/employee_benefits`, body, contentType: 'application/json', headers: HEADERS });
}

function putEmployeeBenefit(body: unknown): string[] {
  return gusto.checkRequest({ method: 'PUT', path: `/v1/employee_benefits/${EMPLOYEE_BENEFIT}`, body, contentType: 'application/json', headers: HEADERS });
}

function unifiedProblems(operation: string, body: unknown): string[] {
  return unified.check(operation, 200, body).errors;
}

describe('Gusto mapping', () => {
  describe('benefit types', () => {
    const supported = responseExample<{ benefit_type: number; name: string; pretax: boolean; posttax: boolean }[]>('Supported-Benefit-List', 'Supported Benefits');
    const idOfName = new Map(supported.map((b) => [b.name, b.benefit_type]));

    // The name each unified type is known by in Gusto's list of supported benefits.
    const NAMES: Record<GustoMappedBenefitType, string> = {
      s125_medical: 'Medical Insurance',
      s125_dental: 'Dental Insurance',
      s125_vision: 'Vision Insurance',
      '401k': '401(k)',
      hsa_pre: 'Health Savings Account',
      fsa_medical: 'Health FSA',
      simple_ira: 'SIMPLE IRA',
      '403b': '403(b)',
      commuter: 'Commuter Benefits (pre-tax)',
      fsa_dependent_care: 'Dependent Care FSA',
      custom_post_tax: 'Other (taxable)',
      '401k_roth': 'Roth 401(k)',
      '403b_roth': 'Roth 403(b)',
    };

    it('takes each id from the document’s list of supported benefits, with the same tax treatment', () => {
      for (const [type, name] of Object.entries(NAMES) as [GustoMappedBenefitType, string][]) {
        expect([type, GUSTO_BENEFIT_TYPES[type]]).toEqual([type, idOfName.get(name)]);
        const entry = supported.find((b) => b.name === name)!;
        const preTax = taxTreatmentOf(type).preTaxScope !== 'post_tax';
        expect([type, entry.pretax, entry.posttax]).toEqual([type, preTax, !preTax]);
      }
      expect(Object.keys(NAMES).sort()).toEqual(Object.keys(GUSTO_BENEFIT_TYPES).sort());
    });

    it('maps or explains every unified type, never both', () => {
      for (const type of BENEFIT_TYPES) {
        const mapped = type in GUSTO_BENEFIT_TYPES;
        const lacking = type in BENEFIT_TYPES_GUSTO_LACKS;
        expect([type, mapped !== lacking]).toEqual([type, true]);
      }
      expect(Object.keys(BENEFIT_TYPES_GUSTO_LACKS).sort()).toEqual(['401k_loan', '457', '457_roth', 'custom_pre_tax', 'hsa_post', 'simple']);
    });

    it('reads every Gusto id of the document back: to its unified type, or to null with its name listed', () => {
      for (const { benefit_type, name } of supported) {
        const type = unifiedBenefitTypeOf(benefit_type);
        if (type === null) expect([benefit_type, GUSTO_BENEFIT_TYPES_WITHOUT_UNIFIED_TYPE[benefit_type]]).toEqual([benefit_type, name]);
        else expect(UNIFIED_BENEFIT_TYPES_BY_GUSTO_ID.get(benefit_type)).toBe(type);
      }
      for (const [type, id] of Object.entries(GUSTO_BENEFIT_TYPES)) expect(unifiedBenefitTypeOf(id)).toBe(type);
      expect([unifiedBenefitTypeOf(113), unifiedBenefitTypeOf(114)]).toEqual(['commuter', 'commuter']);
      expect([unifiedBenefitTypeOf(undefined), unifiedBenefitTypeOf(4242)]).toEqual([null, null]);
    });

    it('refuses a type Gusto cannot represent as the contract refuses it (422 unsupported_paramters)', () => {
      for (const type of [...Object.keys(BENEFIT_TYPES_GUSTO_LACKS), 'not_a_type']) {
        const error = catchError(() => gustoBenefitTypeOf(type));
        expect(error).toBeInstanceOf(DomainError);
        expect(error).toMatchObject({ family: 'unprocessable_request_error', serviceCode: 'unsupported_paramters' });
      }
      expect(gustoBenefitTypeOf('401k_roth')).toBe(105);
    });
  });

  describe('money and percentages', () => {
    it('reads decimal strings and JSON numbers to exact cents, half up beyond the cent', () => {
      expect(['12.50', 12.5, '12.5', '80000.00', 3, '0', '0.00', '-0.92', '.5', '7.'].map(centsOf)).toEqual([1250, 1250, 1250, 8_000_000, 300, 0, 0, -92, 50, 700]);
      // Float arithmetic never reaches the cents: 0.1 + 0.2 is read as its decimal text.
      expect(centsOf(0.1 + 0.2)).toBe(30);
      expect(centsOf(1.005)).toBe(101);
      expect(centsOf('0.615')).toBe(62);
      expect(centsOf('0.614999')).toBe(61);
      expect(centsOf(1e-7)).toBe(0);
      for (const bad of ['', 'string', '1,000.00', '1e3', Number.NaN, Number.POSITIVE_INFINITY]) expect(() => centsOf(bad)).toThrow(RangeError);
    });

    it('writes cents as Gusto’s decimal dollars and reads them back exactly', () => {
      expect([1250, 5, 0, 100, 2_300_000, -92].map(dollarsOf)).toEqual(['12.50', '0.05', '0.00', '1.00', '23000.00', '-0.92']);
      const cents = Array.from({ length: 100_001 }, (_, i) => i);
      expect(cents.filter((c) => centsOf(dollarsOf(c)) !== c)).toEqual([]);
      expect(centsOf(dollarsOf(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
      expect(() => dollarsOf(12.5)).toThrow(RangeError);
    });

    it('writes basis points as percent strings with a decimal, as Gusto does ("5.0"), and reads them back', () => {
      expect([500, 525, 550, 505, 5, 0, 10_000, 333].map(percentOf)).toEqual(['5.0', '5.25', '5.5', '5.05', '0.05', '0.0', '100.0', '3.33']);
      const basisPoints = Array.from({ length: 20_001 }, (_, i) => i);
      expect(basisPoints.filter((bp) => basisPointsOfPercent(percentOf(bp)) !== bp)).toEqual([]);
      expect([basisPointsOfPercent(5), basisPointsOfPercent('2.0'), basisPointsOfPercent('33.333'), basisPointsOfPercent('0.125')]).toEqual([500, 200, 3333, 13]);
      expect(() => percentOf(-1)).toThrow(RangeError);
      expect(() => percentOf(1.5)).toThrow(RangeError);
    });
  });

  describe('company', () => {
    const company = responseExample<GustoCompany>('Company-Object', 'Example');
    const locations = responseExample<GustoLocation[]>('Location-List', 'Example');

    it('starts from answers the document allows', () => {
      expect(gusto.checkResponse('GET /v1/companies/{company_id}', 200, company)).toEqual([]);
      expect(gusto.checkResponse('GET /v1/companies/{company_id}/locations', 200, locations)).toEqual([]);
    });

    it('maps the document’s company to the unified company', () => {
      const record = companyRecordOf(company, undefined, [{ uuid: 'd1', title: 'Engineering' }, { uuid: 'd2', title: ' ' }]);
      expect(record).toEqual({
        id: COMPANY,
        legal_name: 'Shoppe Studios LLC',
        entity: { type: 'corporation', subtype: 'c_corporation' },
        ein: '00-0000001',
        primary_email: 'louie.hessel7757869450111547@zemlak.biz',
        primary_phone_number: '+15657107559',
        departments: [{ name: 'Engineering', parent: null }],
        locations: [
          { line1: '412 Kiera Stravenue', line2: 'Suite 391', city: 'San Francisco', state: 'CA', postal_code: '94107', country: 'US' },
          { line1: '644 Fay Vista', line2: 'Suite 842', city: 'Richmond', state: 'VA', postal_code: '23218', country: 'US' },
        ],
        accounts: [],
      });
      expect(unifiedProblems('GET /employer/company', record)).toEqual([]);
    });

    it('takes the locations list when given (inactive ones left out), and a phone from it when no person has one', () => {
      const gone: GustoLocation = { ...locations[1], uuid: 'gone', street_1: 'Closed office', active: false };
      const bare: GustoCompany = { ...company, primary_payroll_admin: { email: 'pay@shoppe.example' }, primary_signatory: null, entity_type: null, ein: undefined };
      const record = companyRecordOf(bare, [...locations, gone]);
      expect(record.locations.map((l) => l.line1)).toEqual(['412 Kiera Stravenue', '644 Fay Vista']);
      expect(record.primary_phone_number).toBe('+15825710808');
      expect([record.entity, record.ein, record.primary_email]).toEqual([{ type: null, subtype: null }, null, 'pay@shoppe.example']);
      expect(unifiedProblems('GET /employer/company', record)).toEqual([]);
    });

    it('maps every Gusto entity type into the contract’s entity enums, or to null', () => {
      const entityTypes = gusto.document.components.schemas.Company.properties.entity_type.enum as GustoCompany['entity_type'][];
      const publicEntity = loadPublicDocument().components.schemas.CompanyWithoutId.properties.entity.properties;
      for (const entity_type of entityTypes) {
        const { entity } = companyRecordOf({ ...company, entity_type });
        expect([entity_type, [...publicEntity.type.enum, null].includes(entity.type)]).toEqual([entity_type, true]);
        expect([entity_type, [...publicEntity.subtype.enum, null].includes(entity.subtype)]).toEqual([entity_type, true]);
      }
    });
  });

  describe('employees', () => {
    const example = responseExample<GustoEmployee>('Employee-Object', 'Create-Employee-Example');
    const workplace = responseExample<GustoLocation[]>('Location-List', 'Example')[0];
    /** The document's employee, with everything else the mapping reads filled in. */
    const rich: GustoEmployee = {
      ...example,
      middle_initial: 'Q',
      phone: '(415) 555-0100 x12',
      current_employment_status: 'part_time_twenty_plus_hours',
      current_home_address: { street_1: '3121 Milky Way', street_2: '', city: 'San Francisco', state: 'CA', zip: '94107', country: 'USA', active: true },
      jobs: [
        {
          uuid: 'a5b2f0c0-1d8e-4f44-9f5e-6a7b8c9d0e1f',
          title: 'Stage Manager',
          primary: true,
          hire_date: '2021-02-01',
          payment_unit: 'Hour',
          rate: '22.50',
          current_compensation_uuid: 'comp-2',
          state_wc_class_code: '4904-00',
          location: workplace,
          compensations: [
            { uuid: 'comp-2', rate: '22.50', payment_unit: 'Hour', flsa_status: 'Nonexempt', effective_date: '2024-03-01' },
            { uuid: 'comp-1', rate: '20.00', payment_unit: 'Hour', flsa_status: 'Nonexempt', effective_date: '2021-02-01' },
          ],
        },
        { uuid: 'b5b2f0c0-1d8e-4f44-9f5e-6a7b8c9d0e1f', title: 'Usher', primary: false, hire_date: '2019-05-01' },
      ],
      terminations: [{ uuid: 't1', effective_date: '2025-08-31', active: false, cancelable: true }],
    };

    it('starts from answers the document allows', () => {
      expect(gusto.checkResponse('GET /v1/employees/{employee_id}', 200, example)).toEqual([]);
      expect(gusto.checkResponse('GET /v1/employees/{employee_id}', 200, rich)).toEqual([]);
      expect(gusto.checkResponse('GET /v1/companies/{company_id}/employees', 200, [rich])).toEqual([]);
    });

    it('maps the document’s employee to an individual: what Gusto lacks is null, the SSN never given', () => {
      const individual = individualRecordOf(example);
      expect(individual).toEqual({
        id: EMPLOYEE,
        first_name: 'Isom',
        middle_name: null,
        last_name: 'Jaskolski',
        preferred_name: 'Angel',
        emails: [
          { data: 'angel.jaskolski@example.com', type: 'work' },
          { data: 'dane7757869450111550@botsford.net', type: 'personal' },
        ],
        phone_numbers: [{ data: '+11234567890', type: 'personal' }],
        gender: null,
        ethnicity: null,
        marital_status: null,
        dob: '1986-06-25',
        residence: null,
        ssn: null,
      });
      expect(unifiedProblems('POST /employer/individual', { responses: [{ individual_id: EMPLOYEE, code: 200, body: individual }] })).toEqual([]);
    });

    it('takes the home address Gusto includes (or the one given) as the residence', () => {
      const individual = individualRecordOf(rich);
      expect(individual.residence).toEqual({ line1: '3121 Milky Way', line2: null, city: 'San Francisco', state: 'CA', postal_code: '94107', country: 'US' });
      expect(individual.phone_numbers).toEqual([{ data: '+14155550100 x12', type: 'personal' }]);
      expect(individual.middle_name).toBe('Q');
      expect(individualRecordOf(example, { street_1: '1 Main St', city: 'Austin', state: 'TX', zip: '73301' }).residence).toEqual({
        line1: '1 Main St',
        line2: null,
        city: 'Austin',
        state: 'TX',
        postal_code: '73301',
        country: null,
      });
      expect(unifiedProblems('POST /employer/individual', { responses: [{ individual_id: EMPLOYEE, code: 200, body: individual }] })).toEqual([]);
    });

    it('maps the document’s employee to an employment: yearly income in cents from the current compensation', () => {
      const employment = employmentRecordOf(example);
      expect(employment).toEqual({
        id: EMPLOYEE,
        first_name: 'Isom',
        middle_name: null,
        last_name: 'Jaskolski',
        title: 'Client Support Director',
        manager: { id: '5e53e257-c8d6-45aa-aa8a-ec99283a3acd' },
        department: { name: 'Stage Hand' },
        employment: { type: 'employee', subtype: null },
        start_date: '2020-01-20',
        end_date: null,
        is_active: true,
        class_code: null,
        location: null,
        income: { unit: 'yearly', amount: 7_000_000, currency: 'usd', effective_date: '2021-01-20' },
        income_history: [{ unit: 'yearly', amount: 7_000_000, currency: 'usd', effective_date: '2021-01-20' }],
        work_email: 'angel.jaskolski@example.com',
        pay_group_ids: [],
      });
      expect(employmentProblems(employment)).toEqual([]);
    });

    it('reads the primary job: its rates oldest first, current by uuid, location and class code; the first hire; a scheduled end', () => {
      const employment = employmentRecordOf(rich, ['2097fe08-407a-46d7-b35c-a32402a2355e']);
      expect(employment).toMatchObject({
        title: 'Stage Manager',
        employment: { type: 'employee', subtype: 'part_time' },
        start_date: '2019-05-01',
        end_date: '2025-08-31',
        is_active: true,
        class_code: '4904-00',
        location: { line1: '412 Kiera Stravenue', line2: 'Suite 391', city: 'San Francisco', state: 'CA', postal_code: '94107', country: 'US' },
        income: { unit: 'hourly', amount: 2250, currency: 'usd', effective_date: '2024-03-01' },
        income_history: [
          { unit: 'hourly', amount: 2000, currency: 'usd', effective_date: '2021-02-01' },
          { unit: 'hourly', amount: 2250, currency: 'usd', effective_date: '2024-03-01' },
        ],
        pay_group_ids: ['2097fe08-407a-46d7-b35c-a32402a2355e'],
      });
      expect(employmentProblems(employment)).toEqual([]);
    });

    it('turns weekly and monthly salaries into yearly ones exactly; a rate per paycheck has no unified unit', () => {
      const paid = (payment_unit: 'Week' | 'Month' | 'Paycheck', rate: string) =>
        employmentRecordOf({ ...example, jobs: [{ ...example.jobs![0], compensations: [{ uuid: 'c', rate, payment_unit, effective_date: '2024-01-01' }] }] });
      expect(paid('Week', '1000.10').income).toEqual({ unit: 'yearly', amount: 5_200_520, currency: 'usd', effective_date: '2024-01-01' });
      expect(paid('Month', '5000.01').income).toEqual({ unit: 'yearly', amount: 6_000_012, currency: 'usd', effective_date: '2024-01-01' });
      expect([paid('Paycheck', '3000.00').income, paid('Paycheck', '3000.00').income_history]).toEqual([null, []]);
      // A job answered without its compensations still carries its current rate.
      const bare = employmentRecordOf({ ...example, jobs: [{ uuid: 'j', primary: true, hire_date: '2020-01-20', rate: '31.25', payment_unit: 'Hour' }] });
      expect(bare.income).toEqual({ unit: 'hourly', amount: 3125, currency: 'usd', effective_date: '2020-01-20' });
    });

    it('maps each Gusto employment status to a unified subtype, or to null (variable hours)', () => {
      const subtypeOf = (status: GustoEmployee['current_employment_status']) => employmentRecordOf({ ...example, current_employment_status: status }).employment.subtype;
      expect(
        (['full_time', 'part_time_under_twenty_hours', 'part_time_twenty_plus_hours', 'variable', 'seasonal', null] as const).map(subtypeOf),
      ).toEqual(['full_time', 'part_time', 'part_time', null, 'seasonal', null]);
    });

    it('ends a terminated employment on its last day, unless a hire came after it (a rehire)', () => {
      const left: GustoEmployee = { ...example, terminated: true, terminations: [{ uuid: 't', effective_date: '2023-01-15', active: true }] };
      expect(employmentRecordOf(left)).toMatchObject({ end_date: '2023-01-15', is_active: false });
      expect(directoryEntryOf(left).is_active).toBe(false);
      const rehired: GustoEmployee = { ...left, terminated: false, jobs: [{ ...example.jobs![0], hire_date: '2024-01-01' }] };
      expect(gusto.checkResponse('GET /v1/employees/{employee_id}', 200, rehired)).toEqual([]);
      expect(employmentRecordOf(rehired)).toMatchObject({ end_date: null, is_active: true });
    });

    it('maps an employee to a directory entry', () => {
      const entry = directoryEntryOf(example);
      expect(entry).toEqual({
        id: EMPLOYEE,
        first_name: 'Isom',
        middle_name: null,
        last_name: 'Jaskolski',
        manager: { id: '5e53e257-c8d6-45aa-aa8a-ec99283a3acd' },
        department: { name: 'Stage Hand' },
        is_active: true,
      });
      expect(unifiedProblems('GET /employer/directory', { paging: { count: 1, offset: 0 }, individuals: [entry] })).toEqual([]);
    });
  });

  describe('pay schedules', () => {
    const schedules = responseExample<GustoPaySchedule[]>('Pay-Schedule-List', 'Example');

    it('maps the document’s pay schedules to pay groups', () => {
      expect(gusto.checkResponse('GET /v1/companies/{company_id}/pay_schedules', 200, schedules)).toEqual([]);
      const group = payGroupRecordOf(schedules[0], [EMPLOYEE]);
      expect(group).toEqual({
        id: '2097fe08-407a-46d7-b35c-a32402a2355e',
        name: 'Engineering department pay schedule',
        pay_frequencies: ['semi_monthly'],
        individual_ids: [EMPLOYEE],
      });
      expect(payGroupRecordOf(schedules[1], []).pay_frequencies).toEqual(['monthly']);
      expect(unifiedProblems('GET /employer/pay-groups/{pay_group_id}', group)).toEqual([]);
    });

    it('maps every Gusto pay frequency into the contract’s PayFrequency enum', () => {
      const frequencies = gusto.document.components.schemas['Pay-Schedule-Frequency'].enum as string[];
      const withholding = gusto.document.components.schemas['Payroll-Withholding-Pay-Period-Type'].enum as string[];
      const allowed = loadPublicDocument().components.schemas.PayFrequency.enum as string[];
      for (const frequency of [...frequencies, ...withholding]) expect([frequency, allowed.includes(payFrequencyOf(frequency)!)]).toEqual([frequency, true]);
      expect(payFrequencyOf('Every other week')).toBe('bi_weekly');
      expect(payFrequencyOf(undefined)).toBeNull();
    });
  });

  describe('payrolls', () => {
    const PAYROLL = 'b441a30b-2adb-489e-b7b7-9d094011a3f8';
    const SCHEDULE = '2097fe08-407a-46d7-b35c-a32402a2355e';
    const HOURLY = '187412e1-3dbe-491a-bb2f-2f40323a7067';
    const SALARIED = '187412e1-3dbe-491a-bb2f-2f40323a7012';
    const EXCLUDED = '187412e1-3dbe-491a-bb2f-2f40323a7781';
    const hourly: GustoEmployeeCompensation = {
      employee_uuid: HOURLY,
      excluded: false,
      gross_pay: 2156.25,
      net_pay: 1523.43,
      check_amount: 1548.43,
      payment_method: 'Direct Deposit',
      fixed_compensations: [
        { name: 'Bonus', amount: '100.00', job_uuid: 'j1' },
        { name: 'Cash Tips', amount: '0.00', job_uuid: 'j1' },
      ],
      hourly_compensations: [
        { name: 'Regular Hours', hours: '80.000', amount: '2000.00', job_uuid: 'j1', compensation_multiplier: 1, flsa_status: 'Nonexempt' },
        { name: 'Overtime', hours: '1.500', amount: '56.25', job_uuid: 'j1', compensation_multiplier: 1.5, flsa_status: 'Nonexempt' },
        { name: 'Double overtime', hours: '0.000', amount: '0.00', job_uuid: 'j1', compensation_multiplier: 2, flsa_status: 'Nonexempt' },
      ],
      paid_time_off: [{ name: 'Vacation Hours', hours: '8.000' }],
      reimbursements: [{ amount: '25.00', description: 'Internet' }],
      taxes: [
        { name: 'Federal Income Tax', employer: false, amount: 210.1 },
        { name: 'Social Security', employer: false, amount: 133.69 },
        { name: 'Social Security', employer: true, amount: 133.69 },
        { name: 'Medicare', employer: false, amount: 31.27 },
        { name: 'Medicare', employer: true, amount: 31.27 },
        { name: 'CA SDI', employer: false, amount: 23.72 },
        { name: 'FUTA', employer: true, amount: 12.94 },
        { name: 'Philadelphia City Wage Tax', employer: false, amount: 0.1 },
      ],
      benefits: [
        { name: 'Guideline 401(k)', employee_deduction: 107.81, company_contribution: 64.69, imputed: false },
        { name: 'Group Term Life', employee_deduction: 0, company_contribution: 5.5, imputed: true },
        { name: 'Roth 401k', employee_deduction: 20, company_contribution: 0, imputed: false },
      ],
      deductions: [{ name: 'Child Support', amount: 80, amount_type: 'fixed', uuid: 'd1' }],
    };
    const salaried: GustoEmployeeCompensation = {
      employee_uuid: SALARIED,
      excluded: false,
      gross_pay: 3846.15,
      net_pay: 2900,
      payment_method: 'Check',
      fixed_compensations: [],
      hourly_compensations: [{ name: 'Regular Hours', hours: '80.000', amount: '3846.15', job_uuid: 'j2', compensation_multiplier: 1, flsa_status: 'Exempt' }],
      taxes: [{ name: 'Federal Income Tax', employer: false, amount: 946.15 }],
      benefits: [],
      deductions: [],
    };
    const payroll: GustoPayroll = {
      uuid: PAYROLL,
      payroll_uuid: PAYROLL,
      company_uuid: COMPANY,
      processed: true,
      processed_date: '2025-06-16',
      check_date: '2025-06-20',
      payroll_deadline: '2025-06-18T23:00:00Z',
      off_cycle: false,
      external: false,
      pay_period: { start_date: '2025-06-01', end_date: '2025-06-14', pay_schedule_uuid: SCHEDULE },
      payroll_status_meta: { expected_debit_time: '2025-06-17T23:00:00Z' },
      totals: {
        company_debit: '6182.26',
        net_pay: '4423.43',
        gross_pay: '6002.40',
        employer_taxes: '177.90',
        employee_taxes: '1345.03',
        benefits: '70.19',
        employee_benefits_deductions: '127.81',
        reimbursements: '25.00',
      },
      employee_compensations: [hourly, salaried, { ...salaried, employee_uuid: EXCLUDED, excluded: true }],
    };
    const companyBenefits: GustoCompanyBenefit[] = [{ uuid: COMPANY_BENEFIT, benefit_type: 5, description: 'Guideline 401(k)', active: true }];

    it('starts from an answer the document allows', () => {
      expect(gusto.checkResponse('GET /v1/companies/{company_id}/payrolls/{payroll_id}', 200, payroll)).toEqual([]);
    });

    it('maps each paid employee’s compensation to a pay statement in cents', () => {
      const statements = payStatementRecordsOf(payroll, benefitTypesByName(companyBenefits));
      expect(statements.map((s) => s.individual_id)).toEqual([HOURLY, SALARIED]);
      expect(statements[0]).toEqual({
        individual_id: HOURLY,
        type: 'regular_payroll',
        payment_method: 'direct_deposit',
        total_hours: 81.5,
        gross_pay: { amount: 215_625, currency: 'usd' },
        net_pay: { amount: 152_343, currency: 'usd' },
        earnings: [
          { type: 'wage', name: 'Regular Hours', amount: 200_000, currency: 'usd', hours: 80 },
          { type: 'overtime', name: 'Overtime', amount: 5625, currency: 'usd', hours: 1.5 },
          { type: 'bonus', name: 'Bonus', amount: 10_000, currency: 'usd', hours: null },
          { type: 'reimbursement', name: 'Internet', amount: 2500, currency: 'usd', hours: null },
        ],
        taxes: [
          { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 21_010, currency: 'usd' },
          { type: 'fica', name: 'Social Security', employer: false, amount: 13_369, currency: 'usd' },
          { type: 'fica', name: 'Social Security', employer: true, amount: 13_369, currency: 'usd' },
          { type: 'fica', name: 'Medicare', employer: false, amount: 3127, currency: 'usd' },
          { type: 'fica', name: 'Medicare', employer: true, amount: 3127, currency: 'usd' },
          { type: 'state', name: 'CA SDI', employer: false, amount: 2372, currency: 'usd' },
          { type: 'federal', name: 'FUTA', employer: true, amount: 1294, currency: 'usd' },
          { type: 'local', name: 'Philadelphia City Wage Tax', employer: false, amount: 10, currency: 'usd' },
        ],
        employee_deductions: [
          { name: 'Guideline 401(k)', amount: 10_781, currency: 'usd', pre_tax: true, type: '401k' },
          { name: 'Roth 401k', amount: 2000, currency: 'usd', pre_tax: false, type: '401k_roth' },
          { name: 'Child Support', amount: 8000, currency: 'usd', pre_tax: false, type: null },
        ],
        employer_contributions: [
          { name: 'Guideline 401(k)', amount: 6469, currency: 'usd', type: '401k' },
          { name: 'Group Term Life', amount: 550, currency: 'usd', type: null },
        ],
      });
      expect(statements[1]).toMatchObject({
        payment_method: 'check',
        total_hours: 80,
        earnings: [{ type: 'salary', name: 'Regular Hours', amount: 384_615, currency: 'usd', hours: 80 }],
        employee_deductions: [],
        employer_contributions: [],
      });
      expect(unifiedProblems('POST /employer/pay-statement', payStatementAnswer(PAYROLL, statements))).toEqual([]);
    });

    it('names a benefit line’s type by the company benefits, else by Gusto’s benefit names, else null', () => {
      const [withoutNames] = payStatementRecordsOf(payroll);
      expect(withoutNames.employee_deductions.map((d) => d.type)).toEqual([null, '401k_roth', null]);
      expect(withoutNames.employee_deductions[0].pre_tax).toBe(false);
    });

    it('maps the payroll to a payment with Gusto’s totals', () => {
      const payment = paymentRecordOf(payroll, [{ uuid: SCHEDULE, frequency: 'Every other week' }]);
      expect(payment).toEqual({
        id: PAYROLL,
        pay_date: '2025-06-20',
        debit_date: '2025-06-17',
        pay_period: { start_date: '2025-06-01', end_date: '2025-06-14' },
        company_debit: { amount: 618_226, currency: 'usd' },
        gross_pay: { amount: 600_240, currency: 'usd' },
        net_pay: { amount: 442_343, currency: 'usd' },
        employer_taxes: { amount: 17_790, currency: 'usd' },
        employee_taxes: { amount: 134_503, currency: 'usd' },
        individual_ids: [SALARIED, HOURLY].sort(),
        pay_group_ids: [SCHEDULE],
        pay_frequencies: ['bi_weekly'],
      });
      expect(unifiedProblems('GET /employer/payment', [payment])).toEqual([]);
      // Without the schedule the frequency is unknown; an off-cycle run follows none.
      expect(paymentRecordOf(payroll).pay_frequencies).toEqual([]);
      expect(paymentRecordOf({ ...payroll, off_cycle: true, off_cycle_reason: 'Bonus' }).pay_frequencies).toEqual(['other']);
      expect(payStatementRecordsOf({ ...payroll, off_cycle: true }).every((s) => s.type === 'off_cycle_payroll')).toBe(true);
    });

    it('sums the statements when Gusto gives no totals, in integer cents (no float drift)', () => {
      const { totals: _totals, payroll_status_meta: _meta, ...bare } = payroll;
      const payment = paymentRecordOf(bare);
      expect(payment.gross_pay.amount).toBe(215_625 + 384_615);
      expect(payment.employee_taxes.amount).toBe(21_010 + 13_369 + 3127 + 2372 + 10 + 94_615);
      expect(payment.employer_taxes.amount).toBe(13_369 + 3127 + 1294);
      expect(payment.company_debit.amount).toBe(payment.gross_pay.amount + payment.employer_taxes.amount + 6469 + 550);
      expect(payment.debit_date).toBe('2025-06-18');

      // A thousand one-cent taxes add up to ten dollars, where float addition gives 9.999999999999831.
      const pennies: GustoEmployeeCompensation = { ...salaried, gross_pay: 0.1 + 0.2, net_pay: null, taxes: Array.from({ length: 1000 }, () => ({ name: 'Federal Income Tax', employer: false, amount: 0.01 })) };
      const drifting: GustoPayroll = { ...bare, employee_compensations: [pennies] };
      expect(gusto.checkResponse('GET /v1/companies/{company_id}/payrolls/{payroll_id}', 200, drifting)).toEqual([]);
      const [statement] = payStatementRecordsOf(drifting);
      expect(statement.gross_pay.amount).toBe(30);
      expect(statement.net_pay.amount).toBe(30 - 1000);
      expect(paymentRecordOf(drifting).employee_taxes.amount).toBe(1000);
    });

    it('reads the document’s processed payroll, whose amounts are strings where the schema has numbers', () => {
      const processed = responseExample<GustoPayroll>('Payroll-Show-Object', 'Processed');
      // The disagreement itself: if Gusto fixes its example, this says so.
      expect(gusto.checkResponse('GET /v1/companies/{company_id}/payrolls/{payroll_id}', 200, processed).join('\n')).toMatch(/gross_pay must be number/);
      const statements = payStatementRecordsOf(processed);
      expect(statements.map((s) => s.total_hours)).toEqual([100, 40, 40]);
      for (const statement of statements) {
        expect(statement).toMatchObject({ gross_pay: { amount: 279_125 }, net_pay: { amount: 195_331 }, payment_method: 'direct_deposit' });
        expect(statement.taxes).toEqual([
          { type: 'federal', name: 'Federal Income Tax', employer: false, amount: 64_669, currency: 'usd' },
          { type: 'fica', name: 'Social Security', employer: true, amount: 19_125, currency: 'usd' },
        ]);
        expect(statement.employee_deductions).toEqual([
          { name: 'Group Term Life', amount: 10_000, currency: 'usd', pre_tax: false, type: null },
          { name: '401K', amount: 10_000, currency: 'usd', pre_tax: true, type: '401k' },
          { name: 'Child Support', amount: 8000, currency: 'usd', pre_tax: false, type: null },
        ]);
        expect(statement.employer_contributions.map((c) => [c.type, c.amount])).toEqual([
          [null, 5000],
          ['401k', 5000],
        ]);
      }
      const payment = paymentRecordOf(processed);
      expect(payment).toMatchObject({ gross_pay: { amount: 13_063_589 }, company_debit: { amount: 12_174_771 }, pay_group_ids: ['00ebc4a4-ec88-4435-8f45-c505bb63e501'] });
      expect(unifiedProblems('POST /employer/pay-statement', payStatementAnswer(payment.id, statements))).toEqual([]);
    });

    it('refuses an unprocessed payroll: it has no statements yet', () => {
      expect(() => payStatementRecordsOf({ ...payroll, processed: false })).toThrow(RangeError);
      expect(() => paymentRecordOf({ ...payroll, check_date: undefined })).toThrow(RangeError);
    });

    it('types taxes by their Gusto names', () => {
      expect(
        ['Federal Income Tax', 'Social Security', 'Additional Medicare', 'FUTA', 'CA Income Tax', 'NY MCTMT', 'Denver County OPT', 'Ohio School District Tax', 'Something new'].map(taxTypeOf),
      ).toEqual(['federal', 'fica', 'fica', 'federal', 'state', 'state', 'local', 'local', 'local']);
    });
  });

  describe('company benefits', () => {
    const benefitOf = (type: string, overrides: Partial<ProviderBenefit> = {}): ProviderBenefit => ({
      benefit_id: BENEFIT_ID,
      type,
      description: `${type} plan`,
      frequency: 'every_paycheck',
      company_contribution: null,
      ...overrides,
    });

    it('writes a create body the document allows, for every type Gusto has', () => {
      for (const [type, id] of Object.entries(GUSTO_BENEFIT_TYPES)) {
        const body = companyBenefitBodyOf(benefitOf(type, { frequency: null }));
        expect(body).toEqual({ benefit_type: id, active: true, description: `${type} plan` });
        expect(gusto.checkRequest({ method: 'POST', path: `/v1/companies/${COMPANY}/company_benefits`, body, contentType: 'application/json', headers: HEADERS })).toEqual([]);
      }
    });

    it('writes an update body the document allows: the version and the new description', () => {
      const body = companyBenefitBodyOf({ description: 'Kaiser Gold' }, '98jr3289h3298hr9329gf9egskt3kagri32qqgiqe3872');
      expect(body).toEqual({ version: '98jr3289h3298hr9329gf9egskt3kagri32qqgiqe3872', description: 'Kaiser Gold' });
      expect(gusto.checkRequest({ method: 'PUT', path: `/v1/company_benefits/${COMPANY_BENEFIT}`, body, contentType: 'application/json', headers: HEADERS })).toEqual([]);
    });

    it('refuses what Gusto cannot run: a type it lacks, a frequency other than every paycheck', () => {
      expect(catchError(() => companyBenefitBodyOf(benefitOf('457')))).toMatchObject({ serviceCode: 'unsupported_paramters' });
      expect(catchError(() => companyBenefitBodyOf(benefitOf('401k', { frequency: 'monthly' })))).toMatchObject({ serviceCode: 'unsupported_paramters' });
      expect(catchError(() => companyBenefitBodyOf(benefitOf('401k', { frequency: 'one_time' })))).toMatchObject({ serviceCode: 'unsupported_paramters' });
    });

    it('reads the document’s company benefit as the provider’s benefit under the service’s id', () => {
      const [listed] = responseExample<GustoCompanyBenefit[]>('Company-Benefit-List', 'Example');
      expect(gusto.checkResponse('GET /v1/companies/{company_id}/company_benefits', 200, [listed])).toEqual([]);
      expect(providerBenefitOf(listed, BENEFIT_ID)).toEqual({
        benefit_id: BENEFIT_ID,
        type: 's125_medical',
        description: 'Kaiser Permanente',
        frequency: 'every_paycheck',
        company_contribution: null,
      });
      expect(providerBenefitOf({ ...listed, benefit_type: 107 }, BENEFIT_ID)).toBeNull();
    });

    it('round-trips every type through Gusto: create body, Gusto’s answer, provider benefit (the match kept by the service)', () => {
      const match: ProviderBenefit['company_contribution'] = { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] };
      for (const type of Object.keys(GUSTO_BENEFIT_TYPES)) {
        const benefit = benefitOf(type, { company_contribution: match });
        const answer: GustoCompanyBenefit = { uuid: COMPANY_BENEFIT, version: 'v1', company_uuid: COMPANY, source: 'external', deletable: true, ...companyBenefitBodyOf(benefit) };
        expect(gusto.checkResponse('POST /v1/companies/{company_id}/company_benefits', 201, answer)).toEqual([]);
        expect(providerBenefitOf(answer, BENEFIT_ID, match)).toEqual(benefit);
      }
    });

    it('finds the match on a tiered employee benefit when the company benefit comes with them', () => {
      const withEmployees = {
        ...schemaExample<GustoCompanyBenefit>('Company-Benefit', 'Example'),
        benefit_type: 5,
        employee_benefits: [
          { employee_uuid: EMPLOYEE, contribution: { type: 'amount', value: '0.00' } },
          { employee_uuid: EMPLOYEE, contribution: { type: 'tiered', value: { tiers: [{ rate: '100.0', threshold: '3.0', threshold_delta: '3.0' }] } } },
        ],
      };
      expect(gusto.checkResponse('GET /v1/company_benefits/{company_benefit_id}', 200, withEmployees)).toEqual([]);
      expect(providerBenefitOf(withEmployees, BENEFIT_ID)?.company_contribution).toEqual({ type: 'match', tiers: [{ match: 10_000, threshold: 300 }] });
      expect(providerBenefitOf(withEmployees, BENEFIT_ID, null)?.company_contribution).toBeNull();
    });
  });

  describe('employee benefits', () => {
    const effective = { effective_date: '2026-01-01' };
    const TWO_TIERS: ProviderBenefit['company_contribution'] = {
      type: 'match',
      tiers: [
        { match: 10_000, threshold: 300 },
        { match: 5000, threshold: 500 },
      ],
    };

    it('writes a create body: dollars and percent as Gusto’s decimal strings, HSA limit as its enum', () => {
      const configuration: ProviderEnrollmentConfiguration = {
        employee_deduction: { type: 'fixed', amount: 1250 },
        company_contribution: { type: 'percent', amount: 500 },
        annual_maximum: 2_300_000,
        catch_up: true,
        hsa_contribution_limit: 'family',
      };
      const body = employeeBenefitBodyOf(configuration, effective, { company_benefit_uuid: COMPANY_BENEFIT });
      expect(body).toEqual({
        company_benefit_uuid: COMPANY_BENEFIT,
        active: true,
        employee_deduction: '12.50',
        deduct_as_percentage: false,
        employee_deduction_annual_maximum: '23000.00',
        contribution: { type: 'percentage', value: '5.0' },
        elective: false,
        catch_up: true,
        limit_option: 'Family',
        effective_date: '2026-01-01',
      });
      expect(postEmployeeBenefit(body)).toEqual([]);
    });

    it('writes the benefit’s match as tiers when the individual has no contribution of their own', () => {
      const configuration: ProviderEnrollmentConfiguration = {
        employee_deduction: { type: 'percent', amount: 600 },
        company_contribution: null,
        annual_maximum: null,
        catch_up: false,
        hsa_contribution_limit: null,
      };
      const body = employeeBenefitBodyOf(configuration, { effective_date: '2026-01-01', expiration_date: null }, { version: 'v7' }, TWO_TIERS);
      expect(body).toEqual({
        version: 'v7',
        active: true,
        employee_deduction: '6.0',
        deduct_as_percentage: true,
        employee_deduction_annual_maximum: null,
        contribution: {
          type: 'tiered',
          value: [
            { rate: '100.0', threshold: '3.0' },
            { rate: '50.0', threshold: '5.0' },
          ],
        },
        elective: true,
        catch_up: false,
        effective_date: '2026-01-01',
        expiration_date: null,
      });
      expect(putEmployeeBenefit(body)).toEqual([]);
      // No contribution and no match: an explicit $0, so an update clears an earlier one.
      expect(employeeBenefitBodyOf(configuration, effective, { version: 'v7' }).contribution).toEqual({ type: 'amount', value: '0.00' });
    });

    it('round-trips every configuration: body → Gusto’s answer → configuration, and the match through the tiers', () => {
      const deductions: ProviderEnrollmentConfiguration['employee_deduction'][] = [
        null,
        { type: 'fixed', amount: 1250 },
        { type: 'fixed', amount: 1 },
        { type: 'fixed', amount: 123_456_789 },
        { type: 'percent', amount: 500 },
        { type: 'percent', amount: 525 },
        { type: 'percent', amount: 0 },
      ];
      const contributions: ProviderEnrollmentConfiguration['company_contribution'][] = [
        null,
        { type: 'fixed', amount: 5000 },
        { type: 'fixed', amount: 30 },
        { type: 'percent', amount: 300 },
        { type: 'percent', amount: 0 },
      ];
      const matches: ProviderBenefit['company_contribution'][] = [
        null,
        { type: 'match', tiers: [{ match: 10_000, threshold: 300 }] },
        { type: 'match', tiers: [{ match: 10_000, threshold: 100 }, { match: 5000, threshold: 350 }, { match: 2525, threshold: 601 }] },
      ];
      const hsaLimits: ProviderEnrollmentConfiguration['hsa_contribution_limit'][] = [null, 'individual', 'family'];
      const dates: { effective_date: string; expiration_date?: string | null }[] = [effective, { effective_date: '2026-02-15', expiration_date: '2026-12-31' }];
      const failures: unknown[] = [];
      let checked = 0;
      for (const employee_deduction of deductions)
        for (const company_contribution of contributions)
          for (const match of matches)
            for (const catch_up of [false, true])
              for (const hsa_contribution_limit of hsaLimits)
                for (const annual_maximum of [null, 0, 2_300_000])
                  for (const dated of dates) {
                    const configuration: ProviderEnrollmentConfiguration = { employee_deduction, company_contribution, annual_maximum, catch_up, hsa_contribution_limit };
                    const created = employeeBenefitBodyOf(configuration, dated, { company_benefit_uuid: COMPANY_BENEFIT }, match);
                    const updated = employeeBenefitBodyOf(configuration, dated, { version: 'v1' }, match);
                    const answer = gustoAnswerTo(created);
                    const problems = [
                      ...postEmployeeBenefit(created),
                      ...putEmployeeBenefit(updated),
                      ...gusto.checkResponse('GET /v1/employee_benefits/{employee_benefit_id}', 200, answer),
                    ];
                    const matchRead = company_contribution ? null : match;
                    const read = {
                      problems,
                      fromAnswer: enrollmentConfigurationOf(answer),
                      // The body reads back as the answer does (tiers as a bare array there).
                      fromBody: enrollmentConfigurationOf(updated),
                      matchFromAnswer: matchOf(answer),
                      matchFromBody: matchOf(created),
                      dates: [answer.effective_date, answer.expiration_date],
                    };
                    const expected = {
                      problems: [],
                      fromAnswer: configuration,
                      fromBody: configuration,
                      matchFromAnswer: matchRead,
                      matchFromBody: matchRead,
                      dates: [dated.effective_date, dated.expiration_date ?? null],
                    };
                    if (!isDeepStrictEqual(read, expected)) failures.push({ configuration, match, dated, read });
                    checked++;
                  }
      expect(failures).toEqual([]);
      expect(checked).toBe(7 * 5 * 3 * 2 * 3 * 3 * 2);
    });

    it('reads a zero fixed amount as none: Gusto cannot tell them apart ("0.00" is its default)', () => {
      const zero: ProviderEnrollmentConfiguration = {
        employee_deduction: { type: 'fixed', amount: 0 },
        company_contribution: { type: 'fixed', amount: 0 },
        annual_maximum: null,
        catch_up: false,
        hsa_contribution_limit: null,
      };
      const body = employeeBenefitBodyOf(zero, effective, { company_benefit_uuid: COMPANY_BENEFIT });
      expect([body.employee_deduction, body.contribution]).toEqual(['0.00', { type: 'amount', value: '0.00' }]);
      expect(enrollmentConfigurationOf(gustoAnswerTo(body))).toEqual({ ...zero, employee_deduction: null, company_contribution: null });
    });

    it('reads the document’s employee benefits, strings and numbers alike', () => {
      const plain = schemaExample<GustoEmployeeBenefit>('Employee-Benefit', 'Example');
      const tiered = schemaExample<GustoEmployeeBenefit>('Employee-Benefit', 'Tiered Example');
      expect(gusto.checkResponse('GET /v1/employee_benefits/{employee_benefit_id}', 200, tiered)).toEqual([]);
      // The plain example is valid but for a null where the schema has a string, a field the mapping does not read.
      expect(gusto.checkResponse('GET /v1/employee_benefits/{employee_benefit_id}', 200, plain)).toEqual(['response/retirement_loan_identifier must be string']);
      expect(enrollmentConfigurationOf(plain)).toEqual({
        employee_deduction: { type: 'fixed', amount: 10_000 },
        company_contribution: { type: 'fixed', amount: 10_000 },
        annual_maximum: 20_000,
        catch_up: false,
        hsa_contribution_limit: null,
      });
      expect(enrollmentConfigurationOf(tiered).company_contribution).toBeNull();
      expect(matchOf(tiered)).toEqual({ type: 'match', tiers: [{ match: 10_000, threshold: 200 }, { match: 5000, threshold: 500 }] });

      // The company benefit's answer shows the amounts of its employee benefits as JSON numbers.
      const withEmployees = responseExample<{ employee_benefits: GustoEmployeeBenefit[] }>('Company-Benefit-With-Employee-Benefits-Object', 'Example');
      expect(enrollmentConfigurationOf(withEmployees.employee_benefits[0])).toEqual({
        employee_deduction: { type: 'fixed', amount: 300 },
        company_contribution: null,
        annual_maximum: null,
        catch_up: false,
        hsa_contribution_limit: null,
      });
      // Older answers without `contribution`: the deprecated pair.
      expect(enrollmentConfigurationOf({ company_contribution: '2.5', contribute_as_percentage: true }).company_contribution).toEqual({ type: 'percent', amount: 250 });
      expect(enrollmentConfigurationOf({ deduct_as_percentage: true, employee_deduction: 4 }).employee_deduction).toEqual({ type: 'percent', amount: 400 });
    });

    it('refuses an amount that is no number rather than guessing it (the document’s placeholder "string")', () => {
      const placeholder = responseExample<GustoEmployeeBenefit>('Employee-Benefit-Object', 'Tiered example');
      expect(gusto.checkResponse('GET /v1/employee_benefits/{employee_benefit_id}', 200, placeholder)).toEqual([]);
      expect(matchOf(placeholder)).toEqual({ type: 'match', tiers: [{ match: 500, threshold: 200 }, { match: 300, threshold: 500 }] });
      expect(() => enrollmentConfigurationOf(placeholder)).toThrow(RangeError);
    });

    it('writes limit_option only for HSA limits, so a dependent-care FSA keeps its filing status', () => {
      const plain: ProviderEnrollmentConfiguration = { employee_deduction: null, company_contribution: null, annual_maximum: null, catch_up: false, hsa_contribution_limit: null };
      expect('limit_option' in employeeBenefitBodyOf(plain, effective, { version: 'v' })).toBe(false);
      expect(employeeBenefitBodyOf({ ...plain, hsa_contribution_limit: 'individual' }, effective, { version: 'v' }).limit_option).toBe('Individual');
      expect(enrollmentConfigurationOf({ limit_option: 'Joint Filing or Single' }).hsa_contribution_limit).toBeNull();
    });
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

/** The employment as `POST /employer/employment` answers it, checked against the public document. */
function employmentProblems(employment: ReturnType<typeof employmentRecordOf>): string[] {
  // The view only adds the details no provider reports; the record's nulls are the contract's.
  const body = employmentViewOf(employment as unknown as EmploymentRecord);
  return unifiedProblems('POST /employer/employment', { responses: [{ individual_id: employment.id, code: 200, body }] });
}

function payStatementAnswer(paymentId: string, statements: unknown[]): unknown {
  return { responses: [{ payment_id: paymentId, code: 200, body: { paging: { count: statements.length, offset: 0 }, pay_statements: statements } }] };
}

/**
 * What Gusto answers to a POST of `body`: the same fields, tiers inside `{ tiers }` with their
 * `threshold_delta`, the deprecated pair beside an amount or percentage, and the ids.
 */
function gustoAnswerTo(body: GustoEmployeeBenefitCreateBody | GustoEmployeeBenefitUpdateBody): GustoEmployeeBenefit {
  const { contribution, ...fields } = body as GustoEmployeeBenefitCreateBody & { version?: string };
  delete (fields as { version?: string }).version;
  let previous = 0;
  const answered =
    contribution.type === 'tiered'
      ? {
          contribution: {
            type: 'tiered',
            value: {
              tiers: contribution.value.map((tier) => {
                const delta = basisPointsOfPercent(tier.threshold) - previous;
                previous = basisPointsOfPercent(tier.threshold);
                return { ...tier, threshold_delta: percentOf(delta) };
              }),
            },
          },
        }
      : { contribution, company_contribution: contribution.value, contribute_as_percentage: contribution.type === 'percentage' };
  // Fields Gusto answers that the mapping does not read.
  const unread = { coverage_amount: null, deduction_reduces_taxable_income: null, coverage_salary_multiplier: '0.00' };
  return {
    ...fields,
    ...answered,
    ...unread,
    uuid: EMPLOYEE_BENEFIT,
    version: 'answered',
    employee_uuid: EMPLOYEE,
    company_benefit_uuid: COMPANY_BENEFIT,
    limit_option: body.limit_option ?? null,
    expiration_date: body.expiration_date ?? null,
    company_contribution_annual_maximum: null,
  };
}
