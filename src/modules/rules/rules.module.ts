import { Module } from '@nestjs/common';
import { PayStatementItemRulesRepository } from '../../infrastructure/database/repositories/pay-statement-item-rules.repository';
import { EmployerModule } from '../employer/employer.module';
import { PayStatementItemsController } from './pay-statement-items.controller';
import { PayStatementItemsService } from './pay-statement-items.service';
import { RulesController } from './rules.controller';
import { RulesService } from './rules.service';

/** Pay-statement items (from the employer reads) and the rules that attach metadata to them. */
@Module({
  imports: [EmployerModule],
  controllers: [PayStatementItemsController, RulesController],
  providers: [PayStatementItemRulesRepository, RulesService, PayStatementItemsService],
})
export class RulesModule {}
