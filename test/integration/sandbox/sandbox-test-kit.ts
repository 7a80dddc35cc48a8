import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PayStatementRecord } from '../../../src/domain/employer/unified-records';
import { EmployerRef, employerRefOf } from '../../../src/domain/providers/provider-port';
import { ProviderCatalogue } from '../../../src/domain/providers/provider-catalogue';
import { ConnectionsRepository } from '../../../src/infrastructure/database/repositories/connections.repository';

export const catalogue = new ProviderCatalogue();

/** An enrollment's configuration with a fixed employee deduction of `amount` cents, nothing else. */
export const fixedDeduction = (amount: number) => ({
  employee_deduction: { type: 'fixed' as const, amount },
  company_contribution: null,
  annual_maximum: null,
  catch_up: false,
  hsa_contribution_limit: null,
});

/** A sandbox connection with one entity, as POST /sandbox/connections leaves it; its employer's ref. */
export async function sandboxEmployer(
  dataSource: DataSource,
  { providerId = 'sandbox_automated', employeeSize = 20, entityName = 'Acme Corp' } = {},
): Promise<EmployerRef> {
  const provider = catalogue.get(providerId);
  const applicationId = randomUUID();
  await dataSource.query(`INSERT INTO applications (id, name, secret_hash, sandbox) VALUES ($1, 'sandbox tests', 'not-a-secret', true)`, [
    applicationId,
  ]);
  const connection = await dataSource.transaction((manager) =>
    new ConnectionsRepository(dataSource).create(
      {
        applicationId,
        customerId: null,
        customerName: entityName,
        customerEmail: null,
        providerId,
        authenticationType: provider.authentication_methods[0].type,
        products: [...provider.products],
        sandbox: true,
        manual: provider.manual,
        employeeSize,
        entityNames: [entityName],
      },
      manager,
    ),
  );
  return employerRefOf(connection, connection.entities[0]);
}

export const sum = (amounts: number[]) => amounts.reduce((total, amount) => total + amount, 0);

/** The statement arithmetic every pay statement must satisfy. */
export function statementProblems(statement: PayStatementRecord): string[] {
  const problems: string[] = [];
  const gross = sum(statement.earnings.map((e) => e.amount));
  const employeeTaxes = sum(statement.taxes.filter((t) => !t.employer).map((t) => t.amount));
  const deductions = sum(statement.employee_deductions.map((d) => d.amount));
  if (statement.gross_pay.amount !== gross) problems.push(`gross ${statement.gross_pay.amount} != Σ earnings ${gross}`);
  if (statement.net_pay.amount !== gross - employeeTaxes - deductions) {
    problems.push(`net ${statement.net_pay.amount} != gross ${gross} - employee taxes ${employeeTaxes} - deductions ${deductions}`);
  }
  if (statement.net_pay.amount < 0) problems.push(`negative net pay ${statement.net_pay.amount}`);
  return problems.map((p) => `${statement.individual_id}: ${p}`);
}
