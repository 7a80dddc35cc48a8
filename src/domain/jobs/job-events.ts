/** A job reached its final status; sagas waiting on it move in the same transaction. */
export class JobEnded {
  constructor(
    readonly jobId: string,
    readonly status: string,
    readonly at: Date,
  ) {}
}

/** A job in error runs again (an ops retry): the sagas that failed on it wait for it again. */
export class JobRetried {
  constructor(
    readonly jobId: string,
    readonly at: Date,
  ) {}
}
