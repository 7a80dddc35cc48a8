import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { BenefitRequest } from '../../../domain/benefits/benefit-request';
import { BenefitScope } from '../benefits-lookup.service';
import { BenefitJobAnswer, BenefitsService } from '../benefits.service';

/** `POST /employer/benefits`: create, deduped on (entity, type, frequency, description). */
export class CreateBenefitCommand extends Command<BenefitJobAnswer> {
  constructor(
    readonly scope: BenefitScope,
    readonly request: BenefitRequest,
  ) {
    super();
  }
}

/** `POST /employer/benefits/register`: Assisted providers only, deduped like create. */
export class RegisterBenefitCommand extends Command<BenefitJobAnswer> {
  constructor(
    readonly scope: BenefitScope,
    readonly request: BenefitRequest,
  ) {
    super();
  }
}

/** `POST /employer/benefits/{id}`: a new description, applied at the provider by a job. */
export class UpdateBenefitCommand extends Command<BenefitJobAnswer> {
  constructor(
    readonly scope: BenefitScope,
    readonly benefitId: string,
    readonly description: string,
  ) {
    super();
  }
}

/*
 * Each write of a benefit commits the benefit, the job that carries it to the provider (or the
 * Assisted ops task's manual job) and its event in one unit of work (BenefitsService holds the
 * rules they share: dedupe, support, answering an existing benefit).
 */

@CommandHandler(CreateBenefitCommand)
export class CreateBenefitHandler implements ICommandHandler<CreateBenefitCommand, BenefitJobAnswer> {
  constructor(private readonly benefits: BenefitsService) {}

  execute({ scope, request }: CreateBenefitCommand): Promise<BenefitJobAnswer> {
    return this.benefits.create(scope, request);
  }
}

@CommandHandler(RegisterBenefitCommand)
export class RegisterBenefitHandler implements ICommandHandler<RegisterBenefitCommand, BenefitJobAnswer> {
  constructor(private readonly benefits: BenefitsService) {}

  execute({ scope, request }: RegisterBenefitCommand): Promise<BenefitJobAnswer> {
    return this.benefits.register(scope, request);
  }
}

@CommandHandler(UpdateBenefitCommand)
export class UpdateBenefitHandler implements ICommandHandler<UpdateBenefitCommand, BenefitJobAnswer> {
  constructor(private readonly benefits: BenefitsService) {}

  execute({ scope, benefitId, description }: UpdateBenefitCommand): Promise<BenefitJobAnswer> {
    return this.benefits.update(scope, benefitId, description);
  }
}
