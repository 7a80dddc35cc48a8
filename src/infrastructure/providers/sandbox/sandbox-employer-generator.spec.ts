import { ProviderCatalogue } from '../../../domain/providers/provider-catalogue';
import { benefitSupportOf } from '../../../domain/providers/provider';
import { generateSandboxEmployer, SandboxEmployerSpec } from './sandbox-employer-generator';
import { yearsBetween } from './sandbox-pay-calendar';

const catalogue = new ProviderCatalogue();
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TODAY = '2026-06-01';

const spec = (overrides: Partial<SandboxEmployerSpec> = {}): SandboxEmployerSpec => ({
  seed: '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c',
  companyId: '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c',
  employeeSize: 200,
  legalName: 'Acme Corp',
  today: TODAY,
  provider: catalogue.get('sandbox_automated'),
  authenticationType: 'credential',
  ...overrides,
});

describe('sandbox employer generator', () => {
  const employer = generateSandboxEmployer(spec());

  it('gives deep-equal employers for the same seed and size, ids included', () => {
    expect(generateSandboxEmployer(spec())).toEqual(employer);
  });

  it('gives a different employer for another seed', () => {
    const other = generateSandboxEmployer(spec({ seed: 'another-entity' }));
    expect(other.company.ein).not.toBe(employer.company.ein);
    const ids = new Set(employer.people.map((p) => p.individual.id));
    expect(other.people.some((p) => ids.has(p.individual.id))).toBe(false);
  });

  it('generates exactly employee_size people, and keeps employee #n the same person at another size', () => {
    for (const size of [1, 20, 137]) expect(generateSandboxEmployer(spec({ employeeSize: size })).people).toHaveLength(size);
    expect(employer.people).toHaveLength(200);
    const smaller = generateSandboxEmployer(spec({ employeeSize: 50 }));
    expect(smaller.people[30].individual).toEqual(employer.people[30].individual);
  });

  it('refuses sizes outside 0 to 10,000', () => {
    expect(() => generateSandboxEmployer(spec({ employeeSize: 10_001 }))).toThrow(RangeError);
    expect(() => generateSandboxEmployer(spec({ employeeSize: -1 }))).toThrow(RangeError);
  });

  it('mints every id as a UUID v4, and none twice', () => {
    const ids = [
      employer.company.id,
      ...employer.people.map((p) => p.individual.id),
      ...employer.payGroups.map((g) => g.id),
      ...employer.benefits.map((b) => b.benefit_id),
      ...employer.payRuns.map((r) => r.paymentId),
    ];
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('describes the company with the entity name, an EIN, departments with parents, locations and accounts', () => {
    const { company } = employer;
    expect(company.legal_name).toBe('Acme Corp');
    expect(company.ein).toMatch(/^\d{2}-\d{7}$/);
    expect(company.primary_phone_number).toMatch(/^\+1[2-9]\d{9}$/);
    expect(company.primary_email).toMatch(/^[^@\s]+@[^@\s]+\.example$/);
    expect(company.locations.length).toBeGreaterThanOrEqual(1);
    expect(company.locations.length).toBeLessThanOrEqual(3);
    expect(company.departments).toContainEqual({ name: 'Platform', parent: { name: 'Engineering' } });
    const names = new Set(company.departments.map((d) => d.name));
    for (const department of company.departments) if (department.parent) expect(names.has(department.parent.name)).toBe(true);
    for (const account of company.accounts) expect(account.routing_number).toMatch(/^\d{9}$/);
  });

  it('gives people ages 20 to 70, valid SSNs, E.164 phones and both email kinds', () => {
    for (const { individual } of employer.people) {
      const age = yearsBetween(individual.dob, TODAY);
      expect(age).toBeGreaterThanOrEqual(20);
      expect(age).toBeLessThanOrEqual(70);
      expect(individual.ssn).toMatch(/^(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}$/);
      for (const phone of individual.phone_numbers) expect(phone.data).toMatch(/^\+1[2-9]\d{9}$/);
      expect(individual.emails.map((e) => e.type).sort()).toEqual(['personal', 'work']);
      expect(individual.residence.country).toBe('US');
    }
    const workEmails = employer.people.map((p) => p.individual.emails[0].data);
    expect(new Set(workEmails).size).toBe(workEmails.length);
    const states = new Set(employer.people.map((p) => p.individual.residence.state));
    expect([...states].some((s) => ['TX', 'FL', 'WA', 'NV', 'TN', 'SD', 'AK'].includes(s))).toBe(true);
    expect([...states].some((s) => ['CA', 'NY', 'IL', 'MA', 'GA'].includes(s))).toBe(true);
  });

  it('builds an acyclic manager tree with the CEO at its root, managers listed before their reports', () => {
    const position = new Map(employer.people.map((p, i) => [p.individual.id, i]));
    const roots = employer.people.filter((p) => p.employment.manager === null);
    expect(roots).toHaveLength(1);
    expect(roots[0].employment.title).toBe('Chief Executive Officer');
    employer.people.forEach((p, i) => {
      if (p.employment.manager === null) return;
      const managerAt = position.get(p.employment.manager.id);
      expect(managerAt).toBeDefined();
      expect(managerAt!).toBeLessThan(i);
    });
  });

  it('mixes salaried and hourly employees, part-timers and contractors, with a few who left', () => {
    const employments = employer.people.map((p) => p.employment);
    expect(employments.some((e) => e.income.unit === 'yearly')).toBe(true);
    expect(employments.some((e) => e.income.unit === 'hourly')).toBe(true);
    expect(employments.some((e) => e.employment.subtype === 'part_time')).toBe(true);
    expect(employments.some((e) => e.employment.type === 'contractor')).toBe(true);
    expect(employments.filter((e) => e.employment.subtype === 'full_time').length).toBeGreaterThan(employments.length * 0.7);
    const terminated = employments.filter((e) => e.end_date !== null);
    expect(terminated.length).toBeGreaterThan(0);
    for (const e of terminated) {
      expect(e.is_active).toBe(false);
      expect(e.end_date! > e.start_date).toBe(true);
    }
    for (const e of employments) {
      expect(e.start_date <= TODAY).toBe(true);
      expect(e.income.amount).toBeGreaterThan(0);
      expect(e.income_history[e.income_history.length - 1]).toEqual(e.income);
      const groups = employer.payGroups.map((g) => g.id);
      if (e.employment.type === 'contractor') expect(e.pay_group_ids).toEqual([]);
      else expect(e.pay_group_ids.every((id) => groups.includes(id))).toBe(true);
    }
  });

  it('runs benefits the provider supports, with sensible enrollments', () => {
    const provider = catalogue.get('sandbox_automated');
    const types = employer.benefits.map((b) => b.type);
    expect(types).toEqual(expect.arrayContaining(['401k', 's125_medical', 's125_dental', 'hsa_pre']));
    for (const benefit of employer.benefits) expect(benefitSupportOf(provider, benefit.type, 'credential')).not.toBeNull();
    const retirement = employer.benefits.find((b) => b.type === '401k')!;
    expect(retirement.company_contribution).toEqual({ type: 'match', tiers: expect.any(Array) });

    const people = new Map(employer.people.map((p) => [p.individual.id, p]));
    const inRetirement = employer.enrollments.filter((e) => e.benefit_id === retirement.benefit_id);
    expect(inRetirement.length).toBeGreaterThan(employer.people.length * 0.3);
    expect(inRetirement.some((e) => e.configuration.catch_up)).toBe(true);
    expect(inRetirement.some((e) => e.configuration.employee_deduction!.amount >= 2_000)).toBe(true);
    for (const enrollment of employer.enrollments) {
      const person = people.get(enrollment.individual_id)!;
      expect(person.employment.employment.type).toBe('employee');
      expect(enrollment.effective_date >= person.employment.start_date).toBe(true);
      if (enrollment.configuration.catch_up) expect(yearsBetween(person.individual.dob, TODAY)).toBeGreaterThanOrEqual(50);
    }
    const keys = employer.enrollments.map((e) => `${e.benefit_id}|${e.individual_id}|${e.effective_date}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('limits benefits to the provider entry: fixed-only plans get fixed amounts, unsupported types none', () => {
    const justworks = catalogue.get('justworks');
    const generated = generateSandboxEmployer(spec({ provider: justworks, authenticationType: justworks.authentication_methods[0].type }));
    for (const benefit of generated.benefits) {
      const support = benefitSupportOf(justworks, benefit.type, justworks.authentication_methods[0].type);
      expect(support).not.toBeNull();
      for (const enrollment of generated.enrollments.filter((e) => e.benefit_id === benefit.benefit_id)) {
        const deduction = enrollment.configuration.employee_deduction;
        if (deduction) expect(support!.supported_features.employee_deduction).toContain(deduction.type);
        const contribution = enrollment.configuration.company_contribution;
        if (contribution) expect(support!.supported_features.company_contribution).toContain(contribution.type);
        if (enrollment.configuration.catch_up) expect(support!.supported_features.catch_up).toBe(true);
        if (enrollment.configuration.annual_maximum !== null) expect(support!.supported_features.annual_maximum).toBe(true);
      }
    }
  });

  it('plans six months of bi-weekly pay runs up to today plus one off-cycle bonus run', () => {
    const regular = employer.payRuns.filter((r) => r.kind === 'regular_payroll');
    const offCycle = employer.payRuns.filter((r) => r.kind === 'off_cycle_payroll');
    expect(regular.length).toBeGreaterThanOrEqual(13);
    expect(regular.length).toBeLessThanOrEqual(14);
    expect(offCycle).toHaveLength(1);
    for (let i = 1; i < regular.length; i++) {
      expect((Date.parse(regular[i].payDate) - Date.parse(regular[i - 1].payDate)) / 86_400_000).toBe(14);
    }
    expect(regular[regular.length - 1].payDate <= TODAY).toBe(true);
    expect(new Date(`${regular[0].payDate}T00:00:00Z`).getUTCDay()).toBe(5);
  });

  it('generates no payroll for an HR system without payments', () => {
    const bamboo = catalogue.get('bamboo_hr');
    const generated = generateSandboxEmployer(spec({ provider: bamboo, authenticationType: bamboo.authentication_methods[0].type }));
    expect(generated.payRuns).toEqual([]);
    expect(generated.benefits).toEqual([]);
    expect(generated.enrollments).toEqual([]);
    expect(generated.people).toHaveLength(200);
  });
});
