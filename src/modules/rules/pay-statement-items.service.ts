import { Injectable } from '@nestjs/common';
import { PayStatementItem } from '../../domain/employer/pay-statement-items';
import { PayStatementItemFilter, withRuleMetadata } from '../../domain/employer/pay-statement-item-rules';
import { PayStatementItemRulesRepository } from '../../infrastructure/database/repositories/pay-statement-item-rules.repository';
import { EmployerReadsService, ReadScope } from '../employer/employer-reads.service';

/** Distinct pay-statement items of an entity, with the metadata of the rules that match them. */
@Injectable()
export class PayStatementItemsService {
  constructor(
    private readonly reads: EmployerReadsService,
    private readonly rules: PayStatementItemRulesRepository,
  ) {}

  async items(scope: ReadScope, filter: PayStatementItemFilter): Promise<PayStatementItem[]> {
    const [seen, rules] = await Promise.all([this.reads.payStatementItems(scope, filter), this.rules.list(scope.entity.id)]);
    return withRuleMetadata(seen, rules);
  }
}
