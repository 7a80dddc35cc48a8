import { Messaging1795392000000 } from './migrations/1795392000000-messaging';
import { Connections1795400000000 } from './migrations/1795400000000-connections';
import { SandboxPayroll1795500000000 } from './migrations/1795500000000-sandbox-payroll';
import { JobsAndSyncs1795600000000 } from './migrations/1795600000000-jobs-and-syncs';
import { PayStatementItemRules1795700000000 } from './migrations/1795700000000-pay-statement-item-rules';
import { BenefitsAndEnrollments1795800000000 } from './migrations/1795800000000-benefits-and-enrollments';
import { SagasPoliciesAudit1795900000000 } from './migrations/1795900000000-sagas-policies-audit';
import { EnrollmentWorkIndexes1796000000000 } from './migrations/1796000000000-enrollment-work-indexes';
import { JobLeaseIndexes1796100000000 } from './migrations/1796100000000-job-lease-indexes';
import { EnrollmentLifecycle1796200000000 } from './migrations/1796200000000-enrollment-lifecycle';
import { QueueTablesUpkeep1796300000000 } from './migrations/1796300000000-queue-tables-upkeep';
import { InboxScope1796400000000 } from './migrations/1796400000000-inbox-scope';
import { ApplicationAllowedOrigins1796500000000 } from './migrations/1796500000000-application-allowed-origins';
import { ServiceInstances1796600000000 } from './migrations/1796600000000-service-instances';
import { AuthorizationCodeToken1796700000000 } from './migrations/1796700000000-authorization-code-token';
import { SandboxEditSyncs1796800000000 } from './migrations/1796800000000-sandbox-edit-syncs';
import { Webhooks1797000000000 } from './migrations/1797000000000-webhooks';
import { EnrollmentWritePath1797100000000 } from './migrations/1797100000000-enrollment-write-path';
import { ChangeNotifications1797200000000 } from './migrations/1797200000000-change-notifications';
import { JobsWithoutHolderIndex1797300000000 } from './migrations/1797300000000-jobs-without-holder-index';
import { OutboxBodiesAsJson1797400000000 } from './migrations/1797400000000-outbox-bodies-as-json';
import { QueueRowsWithoutForeignKeys1797500000000 } from './migrations/1797500000000-queue-rows-without-foreign-keys';
import { OutboxPendingQueue1797600000000 } from './migrations/1797600000000-outbox-pending-queue';
import { JobLeaseFunction1797700000000 } from './migrations/1797700000000-job-lease-function';
import { JobWeights1797950000000 } from './migrations/1797950000000-job-weights';
import { ProviderGrants1797960000000 } from './migrations/1797960000000-provider-grants';
import { ProviderBenefitLinks1797970000000 } from './migrations/1797970000000-provider-benefit-links';
import { GustoWebhooks1797980000000 } from './migrations/1797980000000-gusto-webhooks';
import { PendingProviderGrants1797990000000 } from './migrations/1797990000000-pending-provider-grants';
import { SagaSourceEventLookup1798000000000 } from './migrations/1798000000000-saga-source-event-lookup';
import { DeductionReconciliation1798200000000 } from './migrations/1798200000000-deduction-reconciliation';
import { JobQueue1798300000000 } from './migrations/1798300000000-job-queue';
import { InPlaceUpdates1798310000000 } from './migrations/1798310000000-in-place-updates';
import { EnrollmentItemsUpdatedInPlace1798320000000 } from './migrations/1798320000000-enrollment-items-updated-in-place';
import { QueueDocumentsWithoutStatistics1797800000000 } from './migrations/1797800000000-queue-documents-without-statistics';
import { IdempotencySecretAnswers1797930000000 } from './migrations/1797930000000-idempotency-secret-answers';
import { IdempotencyAllowances1797940000000 } from './migrations/1797940000000-idempotency-allowances';
import { SandboxPayRunAdjustments1798100000000 } from './migrations/1798100000000-sandbox-pay-run-adjustments';
import { DailyPartitions1798400000000 } from './migrations/1798400000000-daily-partitions';
import { OutboxBatches1798500000000 } from './migrations/1798500000000-outbox-batches';
import { OneSagaEventIndex1798510000000 } from './migrations/1798510000000-one-saga-event-index';
import { IdempotencyPersonalAnswers1798600000000 } from './migrations/1798600000000-idempotency-personal-answers';
import { InboxClaimSentAfter1798700000000 } from './migrations/1798700000000-inbox-claim-sent-after';
import { SagaCounts1798800000000 } from './migrations/1798800000000-saga-counts';
import { JobCounts1798810000000 } from './migrations/1798810000000-job-counts';
import { SagaJobIndividuals1798820000000 } from './migrations/1798820000000-saga-job-individuals';
import { TableUpkeepTurn1798830000000 } from './migrations/1798830000000-table-upkeep-turn';
import { LaterDocumentsWithoutStatistics1798840000000 } from './migrations/1798840000000-later-documents-without-statistics';
import { FailedSagas1798850000000 } from './migrations/1798850000000-failed-sagas';
import { FailedJobs1798860000000 } from './migrations/1798860000000-failed-jobs';
import { JobCountsEveryStatus1798870000000 } from './migrations/1798870000000-job-counts-every-status';
import { JobsListIndex1798880000000 } from './migrations/1798880000000-jobs-list-index';
import { WebhookEnqueueEndpointLocks1798890000000 } from './migrations/1798890000000-webhook-enqueue-endpoint-locks';
import { PlannerRandomPageCost1798900000000 } from './migrations/1798900000000-planner-random-page-cost';
import { QueueTablesSampledLightly1798910000000 } from './migrations/1798910000000-queue-tables-sampled-lightly';
import { InboxClaimDaysPast1798920000000 } from './migrations/1798920000000-inbox-claim-days-past';
import { JobCountsByKindAndType1798930000000 } from './migrations/1798930000000-job-counts-by-kind-and-type';
import { JobsKindListIndex1798940000000 } from './migrations/1798940000000-jobs-kind-list-index';
import { InboxClaimProbesByKey1798950000000 } from './migrations/1798950000000-inbox-claim-probes-by-key';
import { GrownTablesAnalyzedLessOften1798960000000 } from './migrations/1798960000000-grown-tables-analyzed-less-often';

/** Every migration, in order. Listed explicitly so jest, ts-node and the build agree. */
export const MIGRATIONS = [
  Messaging1795392000000,
  Connections1795400000000,
  SandboxPayroll1795500000000,
  JobsAndSyncs1795600000000,
  PayStatementItemRules1795700000000,
  BenefitsAndEnrollments1795800000000,
  SagasPoliciesAudit1795900000000,
  EnrollmentWorkIndexes1796000000000,
  JobLeaseIndexes1796100000000,
  EnrollmentLifecycle1796200000000,
  QueueTablesUpkeep1796300000000,
  InboxScope1796400000000,
  ApplicationAllowedOrigins1796500000000,
  ServiceInstances1796600000000,
  AuthorizationCodeToken1796700000000,
  SandboxEditSyncs1796800000000,
  Webhooks1797000000000,
  EnrollmentWritePath1797100000000,
  ChangeNotifications1797200000000,
  JobsWithoutHolderIndex1797300000000,
  OutboxBodiesAsJson1797400000000,
  QueueRowsWithoutForeignKeys1797500000000,
  OutboxPendingQueue1797600000000,
  JobLeaseFunction1797700000000,
  QueueDocumentsWithoutStatistics1797800000000,
  IdempotencySecretAnswers1797930000000,
  IdempotencyAllowances1797940000000,
  JobWeights1797950000000,
  ProviderGrants1797960000000,
  ProviderBenefitLinks1797970000000,
  GustoWebhooks1797980000000,
  PendingProviderGrants1797990000000,
  SagaSourceEventLookup1798000000000,
  SandboxPayRunAdjustments1798100000000,
  DeductionReconciliation1798200000000,
  JobQueue1798300000000,
  InPlaceUpdates1798310000000,
  EnrollmentItemsUpdatedInPlace1798320000000,
  DailyPartitions1798400000000,
  OutboxBatches1798500000000,
  OneSagaEventIndex1798510000000,
  IdempotencyPersonalAnswers1798600000000,
  InboxClaimSentAfter1798700000000,
  SagaCounts1798800000000,
  JobCounts1798810000000,
  SagaJobIndividuals1798820000000,
  TableUpkeepTurn1798830000000,
  LaterDocumentsWithoutStatistics1798840000000,
  FailedSagas1798850000000,
  FailedJobs1798860000000,
  JobCountsEveryStatus1798870000000,
  JobsListIndex1798880000000,
  WebhookEnqueueEndpointLocks1798890000000,
  PlannerRandomPageCost1798900000000,
  QueueTablesSampledLightly1798910000000,
  InboxClaimDaysPast1798920000000,
  JobCountsByKindAndType1798930000000,
  JobsKindListIndex1798940000000,
  InboxClaimProbesByKey1798950000000,
  GrownTablesAnalyzedLessOften1798960000000,
];
