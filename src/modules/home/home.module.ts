import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { HomeController } from './home.controller';

/** The page at `/`. */
@Module({ imports: [ApplicationsModule], controllers: [HomeController] })
export class HomeModule {}
