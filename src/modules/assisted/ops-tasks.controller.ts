import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBasicAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { invalidRequest } from '../../domain/shared/domain-error';
import {
  CompleteOpsTaskDto,
  FailOpsTaskDto,
  ListOpsTasksQueryDto,
  MAX_TASKS_PAGE,
  OpsTaskResponse,
  opsTaskView,
} from './dto/ops-task.dto';
import { OpsCredentialsGuard, OpsUser } from '../ops-auth/ops-credentials.guard';
import { OpsTasksService } from './ops-tasks.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function requireTaskId(id: string): string {
  if (!UUID.test(id)) throw invalidRequest(`task_id must be a UUID, got ${JSON.stringify(id.slice(0, 100))}`);
  return id;
}

/** The ops team's task queue for Assisted providers (HTTP Basic with the ops credentials). */
@ApiTags('ops')
@ApiBasicAuth('ops')
@Controller('ops/api/tasks')
@UseGuards(OpsCredentialsGuard)
export class OpsTasksController {
  constructor(private readonly tasks: OpsTasksService) {}

  @Get()
  @ApiOperation({ summary: 'Ops tasks, soonest due first; filter by status, SLA state (sla or due_state), type, connection' })
  @ApiOkResponse({ description: '{ paging: { count, offset }, data: [task] }' })
  async list(@Query() query: ListOpsTasksQueryDto) {
    if (query.sla && query.due_state && query.sla !== query.due_state) {
      throw invalidRequest(`sla and due_state name the same filter; ${query.sla} and ${query.due_state} cannot both hold`);
    }
    const page = { limit: query.limit ?? MAX_TASKS_PAGE, offset: query.offset ?? 0 };
    const { count, tasks } = await this.tasks.list(
      { status: query.status, dueState: query.sla ?? query.due_state, type: query.type, connectionId: query.connection_id },
      page,
    );
    const today = this.tasks.today();
    return { paging: { count, offset: page.offset }, data: tasks.map((task) => opsTaskView(task, today)) };
  }

  @Get(':task_id')
  @ApiOperation({ summary: 'One ops task' })
  @ApiOkResponse({ type: OpsTaskResponse })
  async get(@Param('task_id') id: string): Promise<OpsTaskResponse> {
    return opsTaskView(await this.tasks.get(requireTaskId(id)), this.tasks.today());
  }

  @Post(':task_id/complete')
  @HttpCode(200)
  @ApiOperation({ summary: 'The work is done at the provider: completes the task; the change is applied and the manual job completes' })
  @ApiOkResponse({ type: OpsTaskResponse })
  async complete(@Param('task_id') id: string, @Body() body: CompleteOpsTaskDto, @OpsUser() user: string): Promise<OpsTaskResponse> {
    const task = await this.tasks.complete(requireTaskId(id), body.note || null, user);
    return opsTaskView(task, this.tasks.today());
  }

  @Post(':task_id/fail')
  @HttpCode(200)
  @ApiOperation({ summary: 'The work cannot be done: fails the task; the manual job ends in error with the note' })
  @ApiOkResponse({ type: OpsTaskResponse })
  async fail(@Param('task_id') id: string, @Body() body: FailOpsTaskDto, @OpsUser() user: string): Promise<OpsTaskResponse> {
    const task = await this.tasks.fail(requireTaskId(id), body.note, user);
    return opsTaskView(task, this.tasks.today());
  }
}
