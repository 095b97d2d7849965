import { PlatformError } from "../core/errors.ts";
import type { WorkflowEventPayloads } from "./events.ts";

/**
 * Beyond the spec: how a step that names the next one may delay it. The
 * longest sleep, and the longest wait for an event, is a year (as in
 * Cloudflare Workflows and Inngest).
 */
export const MAX_WAIT_MS = 365 * 86_400_000;

const MAX_EVENT_NAME_LENGTH = 256;

type Continuation = Pick<WorkflowEventPayloads["step_completed"], "wake_at" | "waiting_for" | "timeout_at">;

/** Checks an event name (`waitFor`, `workflow.send`): 1-256 characters, no control characters. */
export function checkEventName(name: unknown, what: string): string {
  if (
    typeof name !== "string" ||
    name.length === 0 ||
    name.length > MAX_EVENT_NAME_LENGTH ||
    /[\u0000-\u001f\u007f]/.test(name)
  ) {
    throw new PlatformError(
      "invalid_input",
      `${what} must be an event name of 1-${MAX_EVENT_NAME_LENGTH} characters without control characters, got ${JSON.stringify(name) ?? String(name)}`,
    );
  }
  return name;
}

/**
 * The step_completed fields a step's `{ step, sleepMS | until | waitFor, timeoutMS? }`
 * asks for, given the completion time `at`. Throws `invalid_input` naming the
 * bad field (the step then fails without retry: the same code would return the same).
 */
export function continuationOf(returned: Record<string, unknown>, at: number, where: string): Continuation {
  const { sleepMS, until, waitFor, timeoutMS } = returned;
  const given = [sleepMS, until, waitFor].filter((value) => value !== undefined).length;
  if (given > 1) throw invalid(`${where} returned more than one of sleepMS, until and waitFor; pick one`);
  if (timeoutMS !== undefined && waitFor === undefined)
    throw invalid(`${where} returned timeoutMS without waitFor; timeoutMS bounds a wait for an event`);
  if (sleepMS !== undefined) return { wake_at: at + duration(sleepMS, `${where} sleepMS`) };
  if (until !== undefined) {
    if (typeof until !== "number" || !Number.isFinite(until))
      throw invalid(`${where} until must be a time in epoch milliseconds, got ${JSON.stringify(until)}`);
    if (until - at > MAX_WAIT_MS)
      throw invalid(
        `${where} until is more than a year away (${new Date(until).toISOString()}); sleeps last at most a year`,
      );
    return { wake_at: Math.round(until) };
  }
  if (waitFor !== undefined) {
    const name = checkEventName(waitFor, `${where} waitFor`);
    return timeoutMS === undefined
      ? { waiting_for: name }
      : { waiting_for: name, timeout_at: at + duration(timeoutMS, `${where} timeoutMS`) };
  }
  return {};
}

function duration(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
    throw invalid(`${what} must be a number of milliseconds >= 0, got ${JSON.stringify(value)}`);
  if (value > MAX_WAIT_MS) throw invalid(`${what} must be at most ${MAX_WAIT_MS} (a year), got ${value}`);
  return Math.round(value);
}

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}
