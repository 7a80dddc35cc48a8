import { Module } from '@nestjs/common';

/** Pay-statement items and their rules. */
@Module({})
export class RulesModule {}
