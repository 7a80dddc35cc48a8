import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OpsCredentialsGuard, OpsUser } from '../ops-auth/ops-credentials.guard';
import { DeadLettersService } from './dead-letters.service';
import {
  DeadLetterDetailResponse,
  deadLetterDetailView,
  deadLetterSummaryView,
  DiscardDeadLetterDto,
  ListDeadLettersQueryDto,
  MAX_DEAD_LETTERS_PAGE,
  ReplayDeadLettersDto,
  ReplayResultResponse,
} from './dto/dead-letter.dto';
import { IncludeNamesQueryDto } from './dto/include-names.dto';
import { individualIdsIn, payloadScope } from './individual-names';
import { IndividualNamesRepository } from './individual-names.repository';
import { pageOf, requireUuid } from './ops-ids';

/** Messages consumers refused (poison): read, replay once fixed, or discard with a reason. */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/dead-letters')
@UseGuards(OpsCredentialsGuard)
export class DeadLettersController {
  constructor(
    private readonly deadLetters: DeadLettersService,
    private readonly names: IndividualNamesRepository,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Dead letters, newest first; filter by status, topic, consumer' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [dead letter without payload] }' })
  async list(@Query() query: ListDeadLettersQueryDto) {
    const page = { limit: query.limit ?? MAX_DEAD_LETTERS_PAGE, offset: query.offset ?? 0 };
    const { count, deadLetters } = await this.deadLetters.list({ status: query.status, topic: query.topic, consumer: query.consumer }, page);
    return pageOf(count, page.offset, deadLetters.map(deadLetterSummaryView));
  }

  @Post('replay')
  @HttpCode(200)
  @ApiOperation({ summary: 'Applies one or many dead letters’ messages again; each id answers with its own code' })
  @ApiOkResponse({ description: '{ responses: [{ dead_letter_id, code, body }] }' })
  async replay(@Body() body: ReplayDeadLettersDto, @OpsUser() user: string): Promise<{ responses: ReplayResultResponse[] }> {
    return { responses: await this.deadLetters.replay(body.ids, body.note || null, user) };
  }

  @Get(':dead_letter_id')
  @ApiOperation({ summary: 'One dead letter with its payload, headers and reason' })
  @ApiOkResponse({ type: DeadLetterDetailResponse })
  async get(@Param('dead_letter_id') id: string, @Query() query: IncludeNamesQueryDto): Promise<DeadLetterDetailResponse> {
    const view = deadLetterDetailView(await this.deadLetters.get(requireUuid('dead_letter_id', id)));
    if (!query.include) return view;
    // Named in the scope the message itself claims (an HRIS event's connection and entity); none, no names.
    const scope = payloadScope(view.payload_json);
    const [names] = scope ? await this.names.namesOf([{ ...scope, individualIds: individualIdsIn(view.payload_json) }]) : [{}];
    return { ...view, individual_names: names };
  }

  @Post(':dead_letter_id/discard')
  @HttpCode(200)
  @ApiOperation({ summary: 'Drops an open dead letter for good; the note (why) is required' })
  @ApiOkResponse({ type: DeadLetterDetailResponse })
  async discard(@Param('dead_letter_id') id: string, @Body() body: DiscardDeadLetterDto, @OpsUser() user: string): Promise<DeadLetterDetailResponse> {
    return deadLetterDetailView(await this.deadLetters.discard(requireUuid('dead_letter_id', id), body.note, user));
  }
}
