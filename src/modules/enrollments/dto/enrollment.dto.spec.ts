import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { EnrollmentElementDto, isPlainEnrollmentElement } from './enrollment.dto';

const valid = (element: Record<string, unknown>) =>
  validateSync(plainToInstance(EnrollmentElementDto, element), { whitelist: true, forbidNonWhitelisted: true }).length === 0;

// Any hex in the UUID layout: class-validator's UUID test also wants a version and a variant.
const uuidLayout = fc.stringMatching(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/);
const anyValue = fc.oneof(
  fc.uuid(),
  uuidLayout,
  fc.uuid().map((id) => id.toUpperCase()),
  fc.uuid().map((id) => ` ${id}`),
  fc.uuid().map((id) => id.replace(/-/g, '')),
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.array(fc.integer()),
  fc.dictionary(fc.string(), fc.integer()),
  fc.constant({}),
);
const element = fc.oneof(
  // Mostly the shape the fast path looks for, with the values that come close to passing.
  fc.record({ individual_id: anyValue, configuration: anyValue }, { requiredKeys: [] }),
  fc.dictionary(fc.constantFrom('individual_id', 'configuration', 'extra', 'effective_date', 'Individual_id'), anyValue),
);

describe('isPlainEnrollmentElement (the enrollment body’s fast path)', () => {
  it('passes only elements that EnrollmentElementDto’s validation passes', () => {
    fc.assert(
      fc.property(element, (e) => {
        if (isPlainEnrollmentElement(e)) expect(valid(e)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });

  it('passes the common element, and leaves anything else to class-validator', () => {
    const id = '5b2f0a6e-3c3d-4f6e-9a2b-0c1d2e3f4a5b';
    expect(isPlainEnrollmentElement({ individual_id: id, configuration: { employee_deduction: { type: 'percent', amount: 500 } } })).toBe(true);
    expect(isPlainEnrollmentElement({ individual_id: id.toUpperCase(), configuration: {} })).toBe(true);
    expect(isPlainEnrollmentElement({ individual_id: id })).toBe(false);
    expect(isPlainEnrollmentElement({ individual_id: id, configuration: [] })).toBe(false);
    expect(isPlainEnrollmentElement({ individual_id: id, configuration: null })).toBe(false);
    expect(isPlainEnrollmentElement({ individual_id: 'not-a-uuid', configuration: {} })).toBe(false);
    expect(isPlainEnrollmentElement({ individual_id: id, configuration: {}, extra: 1 })).toBe(false);
    expect(isPlainEnrollmentElement({ individual_id: id, configuration: {}, constructor: 1 })).toBe(false);
  });
});
