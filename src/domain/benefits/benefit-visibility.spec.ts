import { Benefit } from './benefit';
import { visibleBenefits } from './benefit-visibility';

const at = new Date('2026-06-01T12:00:00Z');
const benefit = (id: string, description: string): Benefit => ({
  id,
  connectionId: 'c',
  entityId: 'e',
  type: '401k',
  description,
  frequency: null,
  companyContribution: null,
  origin: 'created',
  jobId: null,
  createdAt: at,
  updatedAt: at,
});
const provider = (id: string, description: string) => ({ benefit_id: id, type: '401k', description, frequency: null, company_contribution: null });

describe('visibleBenefits', () => {
  it('Automated: the provider’s benefits as it describes them, then creations still pending', () => {
    const list = visibleBenefits(
      [provider('a', 'At provider (renamed there)')],
      [
        { benefit: benefit('a', 'Old name'), creationStatus: 'complete' },
        { benefit: benefit('b', 'Pending'), creationStatus: 'pending' },
        { benefit: benefit('c', 'Running'), creationStatus: 'in_progress' },
        { benefit: benefit('d', 'Failed'), creationStatus: 'error' },
        { benefit: benefit('e', 'Gone from provider'), creationStatus: 'complete' },
      ],
    );
    expect(list.map((b) => [b.id, b.description])).toEqual([
      ['a', 'At provider (renamed there)'],
      ['b', 'Pending'],
      ['c', 'Running'],
    ]);
  });

  it('Assisted: the service’s record, less creations that failed', () => {
    const list = visibleBenefits(null, [
      { benefit: benefit('a', 'Open task'), creationStatus: 'pending' },
      { benefit: benefit('b', 'Done'), creationStatus: 'complete' },
      { benefit: benefit('c', 'Failed by ops'), creationStatus: 'error' },
    ]);
    expect(list.map((b) => b.id)).toEqual(['a', 'b']);
  });
});
