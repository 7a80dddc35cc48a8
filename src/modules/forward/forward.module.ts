import { Module } from '@nestjs/common';

/** POST /forward: raw requests passed to the connection's provider. */
@Module({})
export class ForwardModule {}
