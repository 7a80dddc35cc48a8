import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../domain/connections/connection';
import { ConnectionEntity } from '../../domain/connections/entity-scope';
import { PayStatementItemCategory } from '../../domain/employer/pay-statement-items';
import { invalidRequest } from '../../domain/shared/domain-error';
import { RequiresApiVersion } from '../../infrastructure/http/api-version';
import { CurrentEntity, CurrentPrincipal, RequiresAccessToken } from '../auth/access-token.guard';
import { mergedList } from '../employer/dto/entity-scoped-query.dto';
import { PayStatementItemQueryDto } from './dto/pay-statement-item-query.dto';
import { PayStatementItemsService } from './pay-statement-items.service';

@ApiTags('pay-statement-item rules')
@ApiBearerAuth('access-token')
@Controller('employer/pay-statement-item')
export class PayStatementItemsController {
  constructor(private readonly items: PayStatementItemsService) {}

  @Get()
  @RequiresApiVersion()
  @RequiresAccessToken('pay_statement')
  @ApiOperation({ summary: 'List the distinct pay-statement items, with the metadata of matching rules' })
  async list(
    @CurrentPrincipal() { connection }: Principal,
    @CurrentEntity() entity: ConnectionEntity,
    @Query() query: PayStatementItemQueryDto,
  ) {
    if (query.start_date !== undefined && query.end_date !== undefined && query.start_date > query.end_date) {
      throw invalidRequest(`Invalid request: start_date (${query.start_date}) must not be after end_date (${query.end_date})`);
    }
    const responses = await this.items.items(
      { connection, entity },
      {
        categories: mergedList(query.categories, query['categories[]']) as PayStatementItemCategory[] | undefined,
        startDate: query.start_date,
        endDate: query.end_date,
        name: query.name,
        type: query.type,
      },
    );
    return { responses };
  }
}
