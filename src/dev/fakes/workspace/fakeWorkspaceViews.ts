/**
 * The fake workspace's modals: the trigger_id a click or a submit hands out, `views.open` with it (3 s,
 * once), a submit of an open view (`view_submission`) and what the app's answer to it does to the view.
 */
import { randomHex } from "../../../core/crypto/encoding.ts";
import { optionWithValue, viewRefusal, withGeneratedIds } from "./fakeBlockRules.ts";
import { refusalBody } from "./fakeWorkspaceMessages.ts";
import { FAKE_USER_ID, userPayload, type TeamInfo } from "./fakeWorkspaceTeam.ts";
import type { OpenView } from "./fakeWorkspaceView.ts";
import { jsonParam, refusedTrigger } from "./fakeWorkspaceWire.ts";

/** How long a trigger_id opens a view after the click (Slack: 3 seconds), once. */
const TRIGGER_TTL_MS = 3_000;

export function createWorkspaceViews(apiAppId: string, now: () => number) {
  /** trigger_id → the click it came from. */
  const triggers = new Map<string, { teamId: string; userId: string; issuedAt: number; used: boolean }>();
  const views = new Map<string, OpenView>();

  /** A trigger_id for a click or a submit: it opens one view within 3 seconds. */
  function issueTrigger(teamId: string): string {
    const id = `${Math.floor(now() / 1000)}.${Math.floor(Math.random() * 1e12)}.${randomHex(16)}`;
    triggers.set(id, { teamId, userId: FAKE_USER_ID, issuedAt: now(), used: false });
    return id;
  }

  /** `views.open`: a modal for the user who clicked, with the click's trigger_id (3 s, once). */
  function openView(params: Record<string, unknown>, teamId: string): Record<string, unknown> {
    const trigger = triggers.get(typeof params.trigger_id === "string" ? params.trigger_id : "");
    if (!trigger || trigger.teamId !== teamId) return { ok: false, error: "invalid_trigger_id" };
    if (trigger.used) return { ok: false, error: "exchanged_trigger_id" };
    if (now() - trigger.issuedAt > TRIGGER_TTL_MS) return { ok: false, error: "expired_trigger_id" };
    let view: unknown;
    try {
      view = jsonParam(params.view);
    } catch {
      return { ok: false, error: "invalid_arguments", response_metadata: { messages: ["[ERROR] view: invalid JSON"] } };
    }
    const refusal = viewRefusal(view);
    if (refusal) return refusalBody(refusal);
    trigger.used = true;
    const v = view as Record<string, unknown>;
    const opened: OpenView = {
      id: `V0${randomHex(5).toUpperCase()}`,
      teamId,
      userId: trigger.userId,
      callbackId: typeof v.callback_id === "string" ? v.callback_id : "",
      privateMetadata: typeof v.private_metadata === "string" ? v.private_metadata : "",
      title: v.title as Record<string, unknown>,
      ...(v.submit ? { submit: v.submit as Record<string, unknown> } : {}),
      blocks: withGeneratedIds(v.blocks as unknown[]),
      hash: `${Math.floor(now() / 1000)}.${randomHex(4)}`,
    };
    views.set(opened.id, opened);
    return { ok: true, view: { ...viewPayload(opened), state: { values: {} } } };
  }

  function viewPayload(view: OpenView): Record<string, unknown> {
    return {
      id: view.id,
      team_id: view.teamId,
      type: "modal",
      callback_id: view.callbackId,
      private_metadata: view.privateMetadata,
      title: view.title,
      ...(view.submit ? { submit: view.submit } : {}),
      blocks: view.blocks,
      hash: view.hash,
      app_id: apiAppId,
    };
  }

  /** A submit of a view the bot opened (`view_submission`), with what the user entered by action_id. */
  function viewSubmission(
    team: TeamInfo,
    params: Record<string, unknown>,
  ): { view: OpenView; payload: Record<string, unknown> } | Response {
    const callbackId = typeof params.callbackId === "string" ? params.callbackId : "";
    if (!callbackId) return refusedTrigger("a view submit needs callbackId");
    const view = [...views.values()].reverse().find((v) => v.teamId === team.id && v.callbackId === callbackId);
    if (!view)
      return refusedTrigger(
        `No view with callback_id ${JSON.stringify(callbackId)} is open in workspace ${team.id}: Slack sends a submission only for a view the app opened.`,
      );
    const given = params.fields && typeof params.fields === "object" ? (params.fields as Record<string, unknown>) : {};
    const inputs = view.blocks.filter((b) => b.type === "input");
    const ids = inputs.map((b) => String((b.element as Record<string, unknown>).action_id));
    const unknown = Object.keys(given).filter((k) => !ids.includes(k));
    if (unknown.length)
      return refusedTrigger(`The view has no input ${unknown.join(", ")} (its inputs: ${ids.join(", ")}).`);
    const values: Record<string, Record<string, unknown>> = {};
    for (const block of inputs) {
      const element = block.element as Record<string, unknown>;
      const id = String(element.action_id);
      const value = given[id] === undefined ? "" : String(given[id]);
      if (!value && block.optional !== true) return refusedTrigger(`The input ${id} is required.`);
      let state: Record<string, unknown>;
      if (element.type === "static_select") {
        const option = value ? optionWithValue(element, value) : null;
        if (value && !option) return refusedTrigger(`${JSON.stringify(value)} is not an option of ${id}.`);
        state = { type: "static_select", selected_option: option };
      } else {
        const max = typeof element.max_length === "number" ? element.max_length : 3000;
        if (value.length > max) return refusedTrigger(`The input ${id} takes at most ${max} characters.`);
        state = { type: String(element.type), value: value || null };
      }
      values[String(block.block_id)] = { ...values[String(block.block_id)], [id]: state };
    }
    return {
      view,
      payload: {
        type: "view_submission",
        team: { id: team.id, domain: team.id.toLowerCase() },
        user: userPayload(team),
        api_app_id: apiAppId,
        token: "fake-verification-token",
        trigger_id: issueTrigger(team.id),
        view: { ...viewPayload(view), state: { values } },
        response_urls: [],
        is_enterprise_install: false,
        enterprise: null,
      },
    };
  }

  /**
   * What the app's 200 to a view_submission does to the view: none or "clear" closes it, "errors" keeps it open,
   * "update" replaces it with the answer's `view` (refused as views.open refuses one: the view stays as it was).
   * Answers what became of it.
   */
  function answerToSubmission(view: OpenView, body: string): Record<string, unknown> {
    let answer: { response_action?: unknown; view?: unknown } = {};
    try {
      answer = body ? JSON.parse(body) : {};
    } catch {
      return { open: true, refused: "The answer is not JSON: Slack shows the user an error." };
    }
    const action = answer.response_action;
    if (action === undefined || action === "clear") {
      views.delete(view.id);
      return { open: false };
    }
    if (action !== "update") return { open: true };
    const refusal = viewRefusal(answer.view);
    if (refusal) return { open: true, refused: refusal.messages.join(" ") };
    const next = answer.view as Record<string, unknown>;
    const updated: OpenView = {
      ...view,
      callbackId: typeof next.callback_id === "string" ? next.callback_id : "",
      privateMetadata: typeof next.private_metadata === "string" ? next.private_metadata : "",
      title: next.title as Record<string, unknown>,
      blocks: withGeneratedIds(next.blocks as unknown[]),
      hash: `${Math.floor(now() / 1000)}.${randomHex(4)}`,
    };
    if (next.submit) updated.submit = next.submit as Record<string, unknown>;
    else delete updated.submit;
    views.set(view.id, updated);
    return { open: true, updated: viewPayload(updated) };
  }

  return {
    issueTrigger,
    open: openView,
    submission: viewSubmission,
    answerToSubmission,
    /** Every open view, oldest first. */
    all: (): OpenView[] => [...views.values()],
    reset(): void {
      triggers.clear();
      views.clear();
    },
  };
}
