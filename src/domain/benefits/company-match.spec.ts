import { companyMatchProblems } from './company-match';

const match = (...tiers: { match: unknown; threshold: unknown }[]) => ({ type: 'match' as const, tiers: tiers as never });

describe('companyMatchProblems', () => {
  it('accepts one to three tiers with rising thresholds, 0.01 % and 100 % included', () => {
    expect(companyMatchProblems(match({ match: 10_000, threshold: 300 }))).toEqual([]);
    expect(companyMatchProblems(match({ match: 1, threshold: 1 }, { match: 5_000, threshold: 500 }, { match: 10_000, threshold: 10_000 }))).toEqual(
      [],
    );
  });

  it('refuses no tier and more than three', () => {
    expect(companyMatchProblems(match())).toEqual(['company_contribution.tiers: tiers must hold 1 to 3 tiers']);
    const four = [1, 2, 3, 4].map((n) => ({ match: 100, threshold: n * 100 }));
    expect(companyMatchProblems(match(...four))).toEqual(['company_contribution.tiers: tiers must hold 1 to 3 tiers']);
  });

  it.each([
    ['negative', -1],
    ['zero (the public minimum is 1)', 0],
    ['over 10,000', 10_001],
    ['fractional', 12.5],
    ['a string', '100'],
    ['null', null],
  ])('refuses a match that is %s, naming the field', (_label, value) => {
    expect(companyMatchProblems(match({ match: value, threshold: 300 }))).toEqual([
      'company_contribution.tiers[0].match: match must be an integer from 1 to 10000 (basis points)',
    ]);
  });

  it.each([
    ['zero', 0],
    ['over 10,000', 10_001],
    ['fractional', 1.5],
  ])('refuses a threshold that is %s', (_label, value) => {
    expect(companyMatchProblems(match({ match: 100, threshold: value }))).toEqual([
      'company_contribution.tiers[0].threshold: threshold must be an integer from 1 to 10000 (basis points)',
    ]);
  });

  it('refuses thresholds that do not rise, at the tier that breaks the order', () => {
    expect(companyMatchProblems(match({ match: 100, threshold: 500 }, { match: 50, threshold: 500 }))).toEqual([
      'company_contribution.tiers[1].threshold: thresholds must increase from tier to tier (tiers are cumulative bands of pay)',
    ]);
    expect(companyMatchProblems(match({ match: 100, threshold: 500 }, { match: 50, threshold: 300 }))).toHaveLength(1);
  });

  it('reports every problem at once', () => {
    expect(companyMatchProblems(match({ match: -1, threshold: 0 }, { match: 20_000, threshold: 100 }))).toHaveLength(3);
  });
});
