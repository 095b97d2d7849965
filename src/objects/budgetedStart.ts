import type { LiveRunSlots } from "./liveRunSlots.ts";

/** What a start answers of one run: the run it made or found, and whether it made it. */
export interface StartedRunRef {
  runId: string;
  created: boolean;
}

/**
 * Starts runs under the account's live-run budget: a slot for each of
 * `runIds` is held first, all or none (past the budget the start throws
 * `rate_limited` and nothing starts), then `start` runs, answering one run per
 * id in order. A slot this start took whose id it did not create (the id's
 * run existed, had ended, or another run holds its workflow id) is given
 * back; one it found held already stays with the run that holds it. Should
 * `start` throw, the slots of the ids that made no run (`exists`) are given
 * back; an id whose run may exist keeps its slot, which its end gives back.
 */
export async function budgetedStart<T extends StartedRunRef>(
  slots: LiveRunSlots,
  runIds: readonly string[],
  start: () => Promise<T[]>,
  exists: (runId: string) => Promise<boolean>,
): Promise<T[]> {
  const taken = new Set(await slots.hold(runIds));
  let answers: T[];
  try {
    answers = await start();
  } catch (error) {
    const unmade: string[] = [];
    for (const runId of taken) if (!(await exists(runId).catch(() => true))) unmade.push(runId);
    await giveBack(slots, unmade);
    throw error;
  }
  await giveBack(
    slots,
    runIds.filter((runId, index) => {
      const answer = answers[index];
      return taken.has(runId) && (!answer?.created || answer.runId !== runId);
    }),
  );
  return answers;
}

/** Not the start's failure: a slot not given back is the account's loss, never a run's. */
async function giveBack(slots: LiveRunSlots, runIds: string[]): Promise<void> {
  if (runIds.length === 0) return;
  await slots.release(runIds).catch((error: unknown) => {
    console.error(`live-run budget: could not give back the slots of ${runIds.length} run(s):`, error);
  });
}
