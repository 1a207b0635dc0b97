/** A command line the CLI cannot run (unknown command or flag, a missing or bad value): exit 2 with the reason. */
export class UsageError extends Error {
  override name = 'UsageError';
}
