import type { ExampleObject, SchemaObject } from '@nestjs/swagger';

/**
 * Request bodies of the writes, as clients should send them. Amounts are integers: cents for
 * money, basis points for percentages (600 = 6 %), so every example spells its units out.
 */

const INDIVIDUAL_1 = '5a7c3a4e-1b2d-4e6f-8a9b-0c1d2e3f4a5b';
const INDIVIDUAL_2 = '0d9e8f7a-6b5c-4d3e-9f2a-1b0c9d8e7f6a';
const SANDBOX_COMPANY = '5f7a3e7c-1d2b-4f5a-8c9d-0e1f2a3b4c5d';
/** The made-up ids in the examples, for a client (or a test) to replace with real ones. */
export const EXAMPLE_IDS = { individuals: [INDIVIDUAL_1, INDIVIDUAL_2], sandboxCompany: SANDBOX_COMPANY } as const;

export const AMOUNT_UNITS =
  'Integers only. `fixed`: cents per pay period (15000 = $150.00). `percent`: basis points of gross pay ' +
  '(600 = 6 %, 10000 = 100 %), so `amount: 3` means 0.03 %, not 3 %.';

/** `{type, amount}` of a deduction or contribution; null or absent: none. */
const amountSchema = (description: string): SchemaObject => ({
  type: 'object',
  nullable: true,
  required: ['type', 'amount'],
  description: `${description} ${AMOUNT_UNITS}`,
  properties: {
    type: { type: 'string', enum: ['fixed', 'percent'], description: '`fixed`: cents per pay period; `percent`: basis points of gross pay' },
    amount: { type: 'integer', minimum: 0, description: 'Cents if `fixed`; basis points if `percent` (0–10000)', example: 600 },
  },
});

/** The `configuration` of an enrollment element, per field and with units (spec "Enrollment configuration"). */
export function enrollmentConfigurationSchemas(): Record<string, SchemaObject> {
  return {
    EnrollmentConfiguration: {
      type: 'object',
      description:
        'Which fields apply depends on the benefit type: retirement types (401k, 403b, 457, their Roth forms, SIMPLE IRA) ' +
        'take all but `annual_contribution_limit`; HSA types take all; Section 125, FSA, commuter, loan and custom types take ' +
        'only `employee_deduction`, `company_contribution` and `effective_date`. A field the type does not take is refused (400); ' +
        'one the provider does not support is refused with 422 (`GET /employer/benefits/meta` lists what it supports).',
      properties: {
        employee_deduction: amountSchema("What is deducted from the individual's pay."),
        company_contribution: amountSchema('What the company contributes on top.'),
        catch_up: { type: 'boolean', description: 'Retirement and HSA types: catch-up contributions enabled (default false)' },
        annual_maximum: {
          type: 'integer',
          nullable: true,
          minimum: 0,
          description: 'Retirement and HSA types: yearly cap in cents (2300000 = $23,000.00); null: none',
          example: 2300000,
        },
        annual_contribution_limit: {
          type: 'string',
          nullable: true,
          enum: ['individual', 'family', null],
          description: 'HSA types only: whether the individual or the family limit applies',
        },
        effective_date: {
          type: 'string',
          nullable: true,
          description:
            'YYYY-MM-DD (also MM/DD/YYYY or an ISO 8601 date-time). Absent or in the past: the request date. ' +
            'At most two years ahead. Each distinct date is sent to the provider as its own call, on that date.',
          example: '2027-01-01',
        },
      },
    },
  };
}

interface BodyDoc {
  description?: string;
  examples: Record<string, ExampleObject>;
}

const MATCH_401K = {
  type: 'match',
  tiers: [
    { match: 10000, threshold: 300 },
    { match: 5000, threshold: 500 },
  ],
};

/** Request body examples and descriptions by operation (`METHOD /path` as in the document). */
export const REQUEST_BODIES: Record<string, BodyDoc> = {
  'POST /employer/benefits': {
    description:
      '`type` and `description` are required; `frequency` is optional. `company_contribution` (a company match, create only) ' +
      'has 1–3 `tiers`, cumulative bands of pay in basis points: `threshold` is where the band ends (300 = 3 % of pay) and ' +
      '`match` how much of the deferral within the band is matched (10000 = 100 %, 5000 = 50 %). The same type, frequency ' +
      'and description answers the existing benefit.',
    examples: {
      '401k_with_match': {
        summary: '401(k) with a match: 100 % of the first 3 % of pay, 50 % of the next 2 %',
        value: { type: '401k', description: '401(k) Retirement Plan', frequency: 'every_paycheck', company_contribution: MATCH_401K },
      },
      s125_medical: {
        summary: 'Section 125 medical, deducted every paycheck, no match',
        value: { type: 's125_medical', description: 'Medical Insurance', frequency: 'every_paycheck' },
      },
    },
  },
  'POST /employer/benefits/register': {
    description: 'Assisted providers only: records a deduction the employer already runs there. `type`, `frequency` and `description` are required.',
    examples: {
      registered_401k: { summary: 'A 401(k) the employer runs at the provider', value: { type: '401k', description: '401(k) Retirement Plan', frequency: 'every_paycheck' } },
    },
  },
  'POST /employer/benefits/{benefit_id}': {
    description: 'Only the description can change; type, frequency and company match cannot.',
    examples: { rename: { summary: 'New description', value: { description: '401(k) Safe Harbor Plan' } } },
  },
  'POST /employer/benefits/{benefit_id}/individuals': {
    description:
      `A bare JSON array (1–10,000 elements) of \`{ individual_id, configuration }\`. Enrolling an enrolled individual replaces ` +
      `their configuration from its effective date. ${AMOUNT_UNITS}`,
    examples: {
      percent_401k: {
        summary: '401(k): 6 % of pay deferred (600 bp), 3 % company contribution (300 bp), from 1 Jan 2027',
        value: [
          {
            individual_id: INDIVIDUAL_1,
            configuration: {
              employee_deduction: { type: 'percent', amount: 600 },
              company_contribution: { type: 'percent', amount: 300 },
              catch_up: false,
              annual_maximum: 2300000,
              effective_date: '2027-01-01',
            },
          },
        ],
      },
      fixed_amounts: {
        summary: 'Fixed amounts: $150.00 deducted (15000 cents), $50.00 contributed (5000 cents) per pay period',
        value: [
          {
            individual_id: INDIVIDUAL_1,
            configuration: { employee_deduction: { type: 'fixed', amount: 15000 }, company_contribution: { type: 'fixed', amount: 5000 } },
          },
          { individual_id: INDIVIDUAL_2, configuration: { employee_deduction: { type: 'fixed', amount: 15000 } } },
        ],
      },
      hsa_family: {
        summary: 'HSA: $200.00 per pay period (20000 cents), family limit, capped at $8,550.00 a year (855000 cents)',
        value: [
          {
            individual_id: INDIVIDUAL_1,
            configuration: {
              employee_deduction: { type: 'fixed', amount: 20000 },
              annual_contribution_limit: 'family',
              annual_maximum: 855000,
            },
          },
        ],
      },
    },
  },
  'DELETE /employer/benefits/{benefit_id}/individuals': {
    description: 'The individuals leave the benefit from the request date on (1–10,000 ids).',
    examples: { two_individuals: { summary: 'Unenroll two individuals', value: { individual_ids: [INDIVIDUAL_1, INDIVIDUAL_2] } } },
  },
  'POST /jobs/automated': {
    examples: { sync: { summary: 'Sync all of the connection’s data', value: { type: 'data_sync_all' } } },
  },
  'POST /sandbox/connections': {
    description: 'Sandbox application credentials only. `employee_size`: 1–10,000 (default 20); `products`: default every product the provider supports.',
    examples: {
      automated: {
        summary: 'A sandbox employer on the Automated sandbox provider, 20 employees',
        value: { provider_id: 'sandbox_automated', employee_size: 20, products: ['company', 'directory', 'individual', 'employment', 'payment', 'pay_statement', 'benefits'] },
      },
      assisted: { summary: 'A sandbox employer on the Assisted sandbox provider', value: { provider_id: 'sandbox_assisted', employee_size: 5 } },
    },
  },
  'POST /sandbox/connections/accounts': {
    examples: {
      second_account: {
        summary: 'Another account (and token) for an existing sandbox company',
        value: { company_id: SANDBOX_COMPANY, provider_id: 'sandbox_automated', products: ['company', 'directory'] },
      },
    },
  },
  'PUT /sandbox/connections/accounts': {
    examples: { reauth: { summary: 'Make the connection need reauthentication', value: { connection_status: 'reauth' } } },
  },
  'PUT /sandbox/company': {
    examples: {
      rename: { summary: 'Change the legal name and phone number', value: { legal_name: 'Acme Holdings, Inc.', primary_phone_number: '+14155550123 x101' } },
    },
  },
  'POST /sandbox/directory': {
    description: 'A bare JSON array of 1–1,000 new individuals with their employment. `income.amount` is in cents: per year when `unit` is yearly, per hour when hourly.',
    examples: {
      new_hire: {
        summary: 'One salaried new hire earning $85,000.00 a year (8500000 cents)',
        value: [
          {
            first_name: 'Jane',
            last_name: 'Doe',
            dob: '1990-04-17',
            emails: [{ data: 'jane.doe@acme.example', type: 'work' }],
            title: 'Payroll Specialist',
            start_date: '2026-11-02',
            income: { unit: 'yearly', amount: 8500000, currency: 'usd' },
          },
        ],
      },
    },
  },
  'PUT /sandbox/individual/{individual_id}': {
    examples: { rename: { summary: 'Change the preferred name', value: { preferred_name: 'JD' } } },
  },
  'PUT /sandbox/employment/{individual_id}': {
    examples: {
      raise: { summary: 'A raise to $92,000.00 a year (9200000 cents)', value: { income: { unit: 'yearly', amount: 9200000 } } },
      terminate: { summary: 'Terminate on 31 Dec 2026', value: { end_date: '2026-12-31', is_active: false } },
    },
  },
  'POST /sandbox/payment': {
    description: 'Without `pay_date`, the next regular bi-weekly run.',
    examples: { next_run: { summary: 'The next regular pay run', value: {} } },
  },
  'POST /sandbox/jobs': {
    examples: { sync: { summary: 'Sync the sandbox connection’s data', value: { type: 'data_sync_all' } } },
  },
  'PUT /sandbox/jobs/configuration': {
    examples: {
      reauth_error: { summary: 'Make the next syncs end in reauth_error', value: { type: 'data_sync_all', completion_status: 'reauth_error' } },
      complete: { summary: 'Make syncs complete again', value: { type: 'data_sync_all', completion_status: 'complete' } },
    },
  },
};

/** `POST /hris/events` reads its body itself (one event or an array), so the generator sees none. */
export const HRIS_EVENTS_BODY = {
  required: true,
  description:
    'One HRIS event or an array of 1–1,000. Event types, versions and fields: docs/hris-events.md and docs/hris-events.schema.json.',
  content: {
    'application/json': {
      schema: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' }, minItems: 1, maxItems: 1000 }] } as SchemaObject,
      examples: {
        employee_hired: {
          summary: 'A new hire',
          value: {
            id: '324b1908-2a82-4cdf-ac30-12ab7b559ed8',
            type: 'EmployeeHired',
            version: 1,
            occurred_at: '2026-02-20T14:05:00Z',
            connection_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
            entity_id: '9b2f4c1e-7a1d-4b8e-9c35-2d6f0e1a4b77',
            data: { individual_id: INDIVIDUAL_1, start_date: '2026-03-02', dob: '1990-05-17' },
          },
        },
      },
    },
  },
};
