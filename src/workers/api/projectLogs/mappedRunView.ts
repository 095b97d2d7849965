/** What a failed step's `error` holds, as far as its stacks go (the engine's ErrorJSON: name, message, code, stack, cause). */
interface ErrorWithStacks {
  stack?: unknown;
  cause?: ErrorWithStacks;
}

/** The errors of a run view's failed steps, each with its causes and when it was thrown: where their stacks are. */
function stepErrors(view: unknown): { error: ErrorWithStacks; at: number | undefined }[] {
  const events = (view as { events?: unknown } | null)?.events;
  if (!Array.isArray(events)) return [];
  const errors: { error: ErrorWithStacks; at: number | undefined }[] = [];
  for (const event of events as { type?: unknown; at?: unknown; payload?: { error?: ErrorWithStacks } }[]) {
    let error = event?.type === "step_failed" ? event.payload?.error : undefined;
    const at = typeof event?.at === "number" ? event.at : undefined;
    for (let depth = 0; error && typeof error === "object" && depth < 10; depth++) {
      if (typeof error.stack === "string") errors.push({ error, at });
      error = error.cause;
    }
  }
  return errors;
}

/**
 * A run's view (`GET /projects/:slug/workflows/:runId`) with each failed
 * step's error stack, and its causes', pointed at the project's sources by
 * `mapStacks` (the project log's source map of the version that ran when the step failed): what `workflow get`, the
 * console, `platform dev`'s step lines and `platform logs` show. The run's
 * own log keeps the stacks as they were thrown.
 */
export async function withMappedStepErrors(
  view: unknown,
  mapStacks: (stacks: string[], at: (number | undefined)[]) => Promise<string[]>,
): Promise<unknown> {
  const errors = stepErrors(view);
  if (errors.length === 0) return view;
  const mapped = await mapStacks(
    errors.map(({ error }) => error.stack as string),
    errors.map(({ at }) => at),
  );
  errors.forEach(({ error }, i) => {
    error.stack = mapped[i] ?? error.stack;
  });
  return view;
}
