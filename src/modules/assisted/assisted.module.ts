import { Module } from '@nestjs/common';
import { AssistedWorkService } from './assisted-work.service';

/** Assisted providers: ops tasks, manual jobs (/jobs/manual/{id}) and the ops task API. */
@Module({
  imports: [],
  controllers: [],
  providers: [AssistedWorkService],
  exports: [AssistedWorkService],
})
export class AssistedModule {}
