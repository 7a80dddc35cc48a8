import { Global, Module } from '@nestjs/common';
import { OpsAuditWriter } from './ops-audit.writer';

@Global()
@Module({ providers: [OpsAuditWriter], exports: [OpsAuditWriter] })
export class OpsAuditModule {}
