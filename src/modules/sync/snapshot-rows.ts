import { payStatementItemKey, payStatementItemsOf } from '../../domain/employer/pay-statement-items';
import { directoryEntryOf } from '../../domain/employer/unified-records';
import { SnapshotBatch } from '../../domain/providers/provider-port';
import { EmployerDataRow } from '../../infrastructure/database/repositories/employer-data.repository';

/**
 * Turns a provider's snapshot, batch by batch, into `employer_data` rows (layout in
 * employer-data.repository.ts). Stateful only where the layout needs it: the directory
 * position (employments arrive in directory order) and the pay-statement items already seen
 * per pay date, which stay few (distinct items × pay dates), whatever the headcount.
 */
export class SnapshotRows {
  private directoryPosition = 0;
  private readonly itemsSeen = new Set<string>();
  private readonly counts = new Map<string, number>();

  rowsOf(batch: SnapshotBatch): EmployerDataRow[] {
    const rows = this.map(batch);
    for (const row of rows) this.counts.set(row.kind, (this.counts.get(row.kind) ?? 0) + 1);
    return rows;
  }

  /** Rows produced so far, by kind. */
  get countsByKind(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  private map(batch: SnapshotBatch): EmployerDataRow[] {
    switch (batch.kind) {
      case 'company':
        return batch.records.map((c) => row('company', c.id, '', c));
      case 'individual':
        return batch.records.map((i) => row('individual', i.id, i.id, i));
      case 'employment':
        return batch.records.flatMap((e) => [
          row('employment', e.id, e.id, e),
          row('directory', e.id, String(this.directoryPosition++).padStart(8, '0'), directoryEntryOf(e)),
        ]);
      case 'pay_group':
        return batch.records.map((g) => row('pay_group', g.id, g.name, g));
      case 'payment':
        return batch.records.map((p) => ({ ...row('payment', p.id, p.pay_date + p.id, p), payDate: p.pay_date }));
      case 'pay_statement':
        return batch.records.flatMap(({ payment_id, pay_date, statement }) => {
          const rows: EmployerDataRow[] = [
            {
              ...row('pay_statement', `${payment_id}:${statement.individual_id}`, statement.individual_id, statement),
              parentId: payment_id,
              payDate: pay_date,
            },
          ];
          for (const item of payStatementItemsOf(statement)) {
            const key = payStatementItemKey(item);
            const recordId = `${key}|${pay_date}`;
            if (this.itemsSeen.has(recordId)) continue;
            this.itemsSeen.add(recordId);
            rows.push({ ...row('pay_statement_item', recordId, key, item), payDate: pay_date });
          }
          return rows;
        });
    }
  }
}

function row(kind: EmployerDataRow['kind'], recordId: string, sortKey: string, body: unknown): EmployerDataRow {
  return { kind, recordId, parentId: null, payDate: null, sortKey, body: JSON.stringify(body) };
}
