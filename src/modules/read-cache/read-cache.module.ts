import { Module } from '@nestjs/common';
import { EmployerDataRepository } from '../../infrastructure/database/repositories/employer-data.repository';
import { AuthModule } from '../auth/auth.module';
import { GenerationLookup } from './generation-lookup';
import { ReadCache } from './read-cache';
import { SyncedReadInterceptor } from './synced-read.interceptor';

/** Synced employer reads answered from memory, with ETags (read-cache.ts). */
@Module({
  imports: [AuthModule],
  providers: [EmployerDataRepository, GenerationLookup, ReadCache, SyncedReadInterceptor],
  exports: [ReadCache, SyncedReadInterceptor],
})
export class ReadCacheModule {}
