import type { WorkflowRunView } from "../../../engine/execution/describeRun.ts";
import type { StreamBatch } from "../../../engine/streams/liveRunStream.ts";
import { OFFSET_TEXT, type StreamMessage } from "../../../engine/streams/runStream.ts";
import { CliError } from "../commandLine.ts";

/** What `platform workflow watch <run> [--from N] [--topic T[,T…]]` was asked, checked (usage errors exit 2). */
export interface WatchInvocation {
  run: string;
  from: number;
  topics: string[];
}

export function parseWatchInvocation(
  positionals: readonly string[],
  values: Record<string, string | boolean | undefined>,
): WatchInvocation {
  const [run, ...extra] = positionals;
  if (!run || extra.length > 0) throw new CliError("Usage: platform workflow watch <run> [--from N] [--topic T]", 2);
  const from = values.from;
  if (from !== undefined && (typeof from !== "string" || !OFFSET_TEXT.test(from)))
    throw new CliError(`--from must be a message offset (an integer ≥ 0), not ${JSON.stringify(from)}.`, 2);
  const topic = values.topic;
  const topics = typeof topic === "string" ? topic.split(",").filter((t) => t !== "") : [];
  if (typeof topic === "string" && topics.length === 0) throw new CliError("--topic needs a topic name.", 2);
  return { run, from: from === undefined ? 0 : Number(from), topics };
}

/** One message as a line: its offset, topic and data (JSON). */
export function formatStreamLine(message: StreamMessage): string {
  return `#${message.offset} ${message.topic} ${JSON.stringify(message.data)}\n`;
}

/** How the watch reaches the run: one batch of its stream from an offset, and the run's view once it has ended. */
export interface WatchSource {
  readBatch(from: number, topics: readonly string[]): Promise<StreamBatch>;
  view(): Promise<WorkflowRunView>;
}

/**
 * Prints the run's messages as they arrive (each batch read waits for the
 * next message where the platform can; an idle run's actor says when to ask
 * again), then how the run ended. Answers the exit code: 0 when it
 * completed, 1 when it failed or was cancelled.
 */
export async function watchRun(
  invocation: WatchInvocation,
  source: WatchSource,
  write: (text: string) => void,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<number> {
  let from = invocation.from;
  for (;;) {
    const batch = await source.readBatch(from, invocation.topics);
    for (const message of batch.messages) {
      write(formatStreamLine(message));
      from = message.offset + 1;
    }
    if (batch.ended) break;
    if (batch.messages.length === 0 && batch.retryAfterMS !== undefined) await sleep(batch.retryAfterMS);
  }
  const run = await source.view();
  const reason = run.error === undefined ? "" : `: ${run.error}`;
  write(`Run ${run.id} ${run.status}${run.status === "completed" ? "" : reason}.\n`);
  return run.status === "completed" ? 0 : 1;
}
