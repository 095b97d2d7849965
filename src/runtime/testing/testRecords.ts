import type { StreamMessage } from "../../engine/streams/runStream.ts";
import type { PluginId } from "../../contracts/pluginRegistry.ts";
import type { WorkflowRunView } from "../../engine/execution/describeRun.ts";

/**
 * What the test kit keeps for the test: the handle of a run it drives, and
 * what a run or a request did through the platform (the emails and plugin
 * calls its code made, the workflow runs it started).
 */

/**
 * One email as the provider was given it: `to` is always a list.
 * @example
 * const [sent]: SentEmail[] = run.outbox;
 * expect(sent?.subject).toBe("Welcome, Ada");
 */
export interface SentEmail {
  to: string[];
  subject: string;
  html: string;
}

/**
 * One call user code made to a plugin: `action` is the plugin route (`send`, `send-message`, `thread-reply`, …).
 * @example
 * const call: PluginCallRecord | undefined = run.calls.find((c) => c.plugin === "chatserver");
 * expect(call?.action).toBe("send-message");
 */
export interface PluginCallRecord {
  /** The plugin's id in the registry: `email-send`, `chatserver`, `workspace`. */
  plugin: PluginId;
  action: string;
  /** The call's JSON body as the plugin received it. */
  input: Record<string, unknown>;
  /** What the fake answered (the provider-like `{ id }`, `{ messageId, channelId }`, `{ channel, ts }`, …). */
  answer: unknown;
}

/**
 * A run driven by the test kit. Every method runs the workflow on until it
 * is finished or waits for an event, and answers its view then. `Result` is
 * the workflow's result type when the test passed the definition
 * `workflow<Data, Pad, Result>(…)` returned.
 * @example
 * const run: TestRun = await testWorkflow("remind", { to: "ada@example.com" });
 * await run.send("approval", { by: "ada" });
 * expect(run.view.status).toBe("completed");
 */
// biome-ignore lint/suspicious/noExplicitAny: public default: a run's result is user JSON read without declaring a type
export interface TestRun<Result = any> extends PluginRecording {
  readonly id: string;
  readonly workflowId: string;
  readonly name: string;
  /** The run's view as `workflow.get` shows it: status, result or error, and every event with its (virtual) time. */
  readonly view: WorkflowRunView;
  /** The virtual clock (epoch ms): the start time plus every sleep, retry wait and timeout passed so far. */
  now(): number;
  /** `workflow.send(runId, name, payload)`: the step after a `waitFor: name` runs with it as `ctx.event`. */
  send(name: string, payload?: unknown): Promise<WorkflowRunView>;
  /**
   * A POST of `body` to a URL a step made with `ctx.callbackURL`, as a mail
   * link's button or a third party's webhook would send it: the run gets
   * `event_received { name, payload: body, via: "callback" }`, once. Rejects as
   * the platform answers: `conflict` (used already, or the run ended), `gone`
   * (expired on the run's virtual clock), `unauthorized` (altered).
   */
  callback(url: string, body?: unknown): Promise<WorkflowRunView>;
  /** Lets the wait's `timeoutMS` pass: the next step runs with `ctx.event === null`. */
  timeOut(): Promise<WorkflowRunView>;
  /** `workflow.cancel(runId, reason)`. */
  cancel(reason?: string): Promise<WorkflowRunView>;
  /** `workflow.pause(runId, reason)`: no new step runs until `resume`. */
  pause(reason?: string): Promise<WorkflowRunView>;
  /** `workflow.resume(runId)`: the run goes on (what fell due meanwhile, at once). */
  resume(): Promise<WorkflowRunView>;
  /** What `run.result()` would settle with: the result, or a PlatformError `workflow_failed` / `cancelled`. */
  result<T = Result>(): Promise<T>;
  /** The run's stream so far, in offset order: its steps' `ctx.publish` messages and the lifecycle on topic `run`. */
  readonly stream: readonly StreamMessage[];
}

/**
 * What the kit recorded of one run or request.
 * @example
 * const recording: PluginRecording = await testRequest(project, "/notify");
 * expect(recording.calls.map((c) => c.action)).toEqual(["send"]);
 */
export interface PluginRecording {
  /** The emails sent, in order (an idempotency key used again sends once, as with the real plugin). */
  readonly outbox: readonly SentEmail[];
  /** Every plugin call, in order, emails included, with the fake's answer. */
  readonly calls: readonly PluginCallRecord[];
  /** The runs its code started with `workflow.start` (run by the kit as `testWorkflow` runs them). */
  readonly runs: readonly TestRun[];
}

/** A recording as the kit fills it, with what the email fake remembers to answer a repeated idempotency key. */
export interface Recording extends PluginRecording {
  readonly outbox: SentEmail[];
  readonly calls: PluginCallRecord[];
  readonly runs: TestRun[];
  readonly emailIds: Map<string, string>;
}

export function createRecording(): Recording {
  return { outbox: [], calls: [], runs: [], emailIds: new Map() };
}

let current: Recording | null = null;

/** Where plugin calls and started runs are recorded: the run or request the kit executes now (see testScope.ts). */
export function recordInto(recording: Recording | null): void {
  current = recording;
}

export function currentRecording(): Recording | null {
  return current;
}
