/**
 * The recovery cron's every-minute lines when it found nothing to repair: the
 * project's `Re-enqueued 0 workflow(s)` and the API worker's
 * `cron <slug>/__workflow-recovery: 200 Re-enqueued 0 workflow(s)`. Logs
 * leave them out (`platform dev`'s terminal, a project's log); a sweep that
 * repaired something is always shown.
 */
export function isIdleRecoveryLine(message: string): boolean {
  return /(^|: 200 )Re-enqueued 0 workflow\(s\)$/.test(message.trim());
}
