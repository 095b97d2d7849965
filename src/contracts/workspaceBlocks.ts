import { PlatformError } from "../core/errors.ts";

/**
 * Block Kit (the workspace provider's message layout: Slack's) as the
 * platform checks it before any call: user code passes Slack's own blocks and
 * views, and what the provider would refuse (`invalid_blocks`,
 * `invalid_arguments`) is refused here first as `invalid_input` naming the
 * field, with Slack's documented limits. What is not limited here passes
 * through unchanged.
 */
export const WORKSPACE_BLOCK_LIMITS = {
  messageBlocks: 50,
  viewBlocks: 100,
  blockIdChars: 255,
  actionIdChars: 255,
  actionsElements: 25,
  buttonTextChars: 75,
  buttonValueChars: 2000,
  urlChars: 3000,
  selectOptions: 100,
  optionTextChars: 75,
  optionValueChars: 150,
  placeholderChars: 150,
  sectionTextChars: 3000,
  sectionFields: 10,
  headerTextChars: 150,
  inputLabelChars: 2000,
  viewTitleChars: 24,
  callbackIdChars: 255,
  privateMetadataChars: 3000,
  contextElements: 10,
  imageUrlChars: 3000,
  altTextChars: 2000,
  /** views.open: "up to 250kb" of the view's JSON. */
  viewBytes: 250_000,
} as const;

const L = WORKSPACE_BLOCK_LIMITS;

type Json = Record<string, unknown>;

function invalid(path: string, rule: string): PlatformError {
  return new PlatformError("invalid_input", `${path} ${rule}.`);
}

function object(value: unknown, path: string): Json {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw invalid(path, "must be an object");
  return value as Json;
}

function string(value: unknown, path: string, max: number): string {
  if (typeof value !== "string" || value.length < 1 || value.length > max)
    throw invalid(path, `must be 1–${max} characters`);
  return value;
}

/** A text object `{ type: "plain_text" | "mrkdwn", text }` whose text is at most `max`. */
function textObject(value: unknown, path: string, max: number, plainOnly = false): void {
  const t = object(value, path);
  if (t.type !== "plain_text" && (plainOnly || t.type !== "mrkdwn"))
    throw invalid(`${path}.type`, plainOnly ? `must be "plain_text"` : `must be "plain_text" or "mrkdwn"`);
  string(t.text, `${path}.text`, max);
}

function options(value: unknown, path: string): string[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > L.selectOptions)
    throw invalid(path, `must be an array of 1–${L.selectOptions} options`);
  return value.map((raw, i) => {
    const option = object(raw, `${path}[${i}]`);
    textObject(option.text, `${path}[${i}].text`, L.optionTextChars);
    return string(option.value, `${path}[${i}].value`, L.optionValueChars);
  });
}

/** One element (a button, a select, an input…); its action_id is collected into `actionIds`. */
function element(value: unknown, path: string, actionIds: Set<string>): void {
  const e = object(value, path);
  if (typeof e.type !== "string") throw invalid(`${path}.type`, "must be a string");
  if (e.action_id !== undefined) {
    const id = string(e.action_id, `${path}.action_id`, L.actionIdChars);
    if (actionIds.has(id)) throw invalid(`${path}.action_id`, `repeats ${JSON.stringify(id)}: each must be unique`);
    actionIds.add(id);
  }
  if (e.placeholder !== undefined) textObject(e.placeholder, `${path}.placeholder`, L.placeholderChars, true);
  if (e.type === "button") {
    textObject(e.text, `${path}.text`, L.buttonTextChars, true);
    if (e.value !== undefined) string(e.value, `${path}.value`, L.buttonValueChars);
    if (e.url !== undefined) string(e.url, `${path}.url`, L.urlChars);
    if (e.style !== undefined && e.style !== "primary" && e.style !== "danger")
      throw invalid(`${path}.style`, `must be "primary" or "danger"`);
  }
  if (e.type === "static_select" || e.type === "multi_static_select") options(e.options, `${path}.options`);
}

function block(value: unknown, path: string, actionIds: Set<string>): void {
  const b = object(value, path);
  if (typeof b.type !== "string") throw invalid(`${path}.type`, "must be a string");
  if (b.block_id !== undefined) string(b.block_id, `${path}.block_id`, L.blockIdChars);
  switch (b.type) {
    case "section":
      if (b.text === undefined && b.fields === undefined) throw invalid(path, "needs text or fields");
      if (b.text !== undefined) textObject(b.text, `${path}.text`, L.sectionTextChars);
      if (b.fields !== undefined) {
        if (!Array.isArray(b.fields) || b.fields.length > L.sectionFields)
          throw invalid(`${path}.fields`, `must be an array of at most ${L.sectionFields} text objects`);
        for (const [i, f] of b.fields.entries()) textObject(f, `${path}.fields[${i}]`, 2000);
      }
      if (b.accessory !== undefined) element(b.accessory, `${path}.accessory`, actionIds);
      return;
    case "actions":
      if (!Array.isArray(b.elements) || b.elements.length < 1 || b.elements.length > L.actionsElements)
        throw invalid(`${path}.elements`, `must be an array of 1–${L.actionsElements} elements`);
      for (const [i, e] of b.elements.entries()) element(e, `${path}.elements[${i}]`, actionIds);
      return;
    case "header":
      textObject(b.text, `${path}.text`, L.headerTextChars, true);
      return;
    case "context":
      if (!Array.isArray(b.elements) || b.elements.length < 1 || b.elements.length > L.contextElements)
        throw invalid(`${path}.elements`, `must be an array of 1–${L.contextElements} elements`);
      return;
    case "image":
      if (b.image_url === undefined && b.slack_file === undefined) throw invalid(path, "needs image_url or slack_file");
      if (b.image_url !== undefined) string(b.image_url, `${path}.image_url`, L.imageUrlChars);
      string(b.alt_text, `${path}.alt_text`, L.altTextChars);
      return;
    case "input":
      textObject(b.label, `${path}.label`, L.inputLabelChars, true);
      element(b.element, `${path}.element`, actionIds);
      return;
    default:
      return;
  }
}

/**
 * Checks a message's blocks (0–50; an empty array removes an edited message's
 * blocks) or a view's (1–100); answers them unchanged.
 */
export function requireBlocks(value: unknown, path = "blocks", max: number = L.messageBlocks): Json[] {
  const min = max === L.viewBlocks ? 1 : 0;
  if (!Array.isArray(value) || value.length < min || value.length > max)
    throw invalid(path, `must be an array of ${min}–${max} blocks`);
  const actionIds = new Set<string>();
  for (const [i, b] of value.entries()) block(b, `${path}[${i}]`, actionIds);
  return value as Json[];
}

/** Checks a view (`workspace.openView`): a modal with a title, its blocks, and submit when it has inputs. */
export function requireView(value: unknown, path = "view"): Json {
  const view = object(value, path);
  if (new TextEncoder().encode(JSON.stringify(view)).length > L.viewBytes)
    throw invalid(path, `must be at most ${L.viewBytes} bytes of JSON`);
  if (view.type !== "modal") throw invalid(`${path}.type`, `must be "modal"`);
  textObject(view.title, `${path}.title`, L.viewTitleChars, true);
  if (view.submit !== undefined) textObject(view.submit, `${path}.submit`, L.viewTitleChars, true);
  if (view.close !== undefined) textObject(view.close, `${path}.close`, L.viewTitleChars, true);
  if (view.callback_id !== undefined) string(view.callback_id, `${path}.callback_id`, L.callbackIdChars);
  if (
    view.private_metadata !== undefined &&
    (typeof view.private_metadata !== "string" || view.private_metadata.length > L.privateMetadataChars)
  )
    throw invalid(`${path}.private_metadata`, `must be a string of at most ${L.privateMetadataChars} characters`);
  const blocks = requireBlocks(view.blocks, `${path}.blocks`, L.viewBlocks);
  if (view.submit === undefined && blocks.some((b) => b.type === "input"))
    throw invalid(`${path}.submit`, "is required when the view has input blocks");
  return view;
}

/**
 * A submitted view's values by element `action_id` (`view.state.values` is
 * keyed by block_id, then action_id): a text input's value, a select's chosen
 * option value (several, comma-joined, for a multi-select).
 */
export function viewFieldsFromState(values: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!values || typeof values !== "object") return fields;
  for (const byAction of Object.values(values as Record<string, unknown>)) {
    if (!byAction || typeof byAction !== "object") continue;
    for (const [actionId, raw] of Object.entries(byAction as Record<string, unknown>)) {
      const state = (raw ?? {}) as Json;
      const option = state.selected_option as { value?: unknown } | null | undefined;
      const several = state.selected_options as { value?: unknown }[] | undefined;
      if (typeof state.value === "string") fields[actionId] = state.value;
      else if (option && typeof option.value === "string") fields[actionId] = option.value;
      else if (Array.isArray(several)) fields[actionId] = several.map((o) => String(o?.value ?? "")).join(",");
      else if (typeof state.selected_date === "string") fields[actionId] = state.selected_date;
      else fields[actionId] = "";
    }
  }
  return fields;
}
