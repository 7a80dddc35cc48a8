import { Module } from '@nestjs/common';
import { ForwardController } from './forward.controller';
import { ForwardService } from './forward.service';

/** POST /forward: raw requests passed to the connection's provider. */
@Module({
  controllers: [ForwardController],
  providers: [ForwardService],
})
export class ForwardModule {}
