/**
 * The workspace provider's own Block Kit rules (Slack's documented limits),
 * as the fake enforces them: a message's blocks that break one are refused
 * `invalid_blocks`, a view `invalid_arguments`, each with Slack's
 * `response_metadata.messages` naming the place. Like Slack, the fake gives a
 * block without `block_id` and an interactive element without `action_id`
 * generated ones, so every click and submitted value has its keys. The
 * platform checks the same limits before sending (src/contracts/workspaceBlocks.ts);
 * these are the provider's side, written from its documentation.
 */
import { randomHex } from "../../../core/crypto/encoding.ts";

type Json = Record<string, unknown>;

const BLOCK_TYPES = new Set([
  "section",
  "actions",
  "context",
  "divider",
  "header",
  "image",
  "input",
  "rich_text",
  "file",
  "video",
  "markdown",
]);
/** Elements a click or a choice sends as a block action (or whose value a view submits). */
export const INTERACTIVE = new Set([
  "button",
  "static_select",
  "multi_static_select",
  "overflow",
  "datepicker",
  "checkboxes",
  "radio_buttons",
  "plain_text_input",
]);

/** A view's JSON may be at most this large (views.open: "up to 250kb"). */
export const MAX_VIEW_BYTES = 250_000;

const isObject = (v: unknown): v is Json => Boolean(v) && typeof v === "object" && !Array.isArray(v);
const textOf = (v: unknown): string => (isObject(v) && typeof v.text === "string" ? v.text : "");

/** Slack's answer to blocks it refuses. */
export interface BlockRefusal {
  error: "invalid_blocks" | "invalid_arguments";
  messages: string[];
}

function elementProblem(e: Json, at: string, ids: Set<string>): string | null {
  if (typeof e.type !== "string") return `${at}: missing required field: type`;
  if (typeof e.action_id === "string") {
    if (e.action_id.length > 255) return `${at}.action_id: must be less than 256 characters`;
    if (ids.has(e.action_id)) return `${at}.action_id: action_id must be unique across the message or view`;
    ids.add(e.action_id);
  }
  if (e.type === "button") {
    const label = textOf(e.text);
    if (!label || label.length > 75) return `${at}.text: must be between 1 and 75 characters`;
    if (typeof e.value === "string" && e.value.length > 2000) return `${at}.value: must be less than 2001 characters`;
  }
  if (e.type === "static_select" || e.type === "multi_static_select") {
    const options = e.options;
    if (!Array.isArray(options) || options.length < 1 || options.length > 100)
      return `${at}.options: must provide between 1 and 100 options`;
    for (const [i, o] of options.entries()) {
      if (!isObject(o) || !textOf(o.text) || textOf(o.text).length > 75)
        return `${at}.options[${i}].text: must be between 1 and 75 characters`;
      if (typeof o.value !== "string" || o.value.length < 1 || o.value.length > 150)
        return `${at}.options[${i}].value: must be between 1 and 150 characters`;
    }
  }
  return null;
}

/** The first rule `blocks` break (at most `max` of them), or null. */
function blocksProblem(blocks: unknown, max: number, where: string): string | null {
  if (!Array.isArray(blocks) || blocks.length > max) return `${where}: must provide between 0 and ${max} blocks`;
  const ids = new Set<string>();
  for (const [i, raw] of blocks.entries()) {
    const at = `${where}[${i}]`;
    if (!isObject(raw) || typeof raw.type !== "string") return `${at}: missing required field: type`;
    if (!BLOCK_TYPES.has(raw.type)) return `${at}.type: unsupported type: ${raw.type}`;
    if (typeof raw.block_id === "string" && raw.block_id.length > 255)
      return `${at}.block_id: must be less than 256 characters`;
    if (raw.type === "section") {
      if (raw.text === undefined && raw.fields === undefined) return `${at}: must provide text or fields`;
      if (textOf(raw.text).length > 3000) return `${at}.text: must be less than 3001 characters`;
      if (isObject(raw.accessory)) {
        const bad = elementProblem(raw.accessory, `${at}.accessory`, ids);
        if (bad) return bad;
      }
    }
    if (raw.type === "actions") {
      if (!Array.isArray(raw.elements) || raw.elements.length < 1 || raw.elements.length > 25)
        return `${at}.elements: must provide between 1 and 25 elements`;
      for (const [j, e] of raw.elements.entries()) {
        const bad = isObject(e)
          ? elementProblem(e, `${at}.elements[${j}]`, ids)
          : `${at}.elements[${j}]: must be an object`;
        if (bad) return bad;
      }
    }
    if (raw.type === "context" && (!Array.isArray(raw.elements) || raw.elements.length < 1 || raw.elements.length > 10))
      return `${at}.elements: must provide between 1 and 10 elements`;
    if (raw.type === "image") {
      if (typeof raw.image_url !== "string" && !isObject(raw.slack_file))
        return `${at}: must provide either image_url or slack_file`;
      if (typeof raw.image_url === "string" && (raw.image_url.length < 1 || raw.image_url.length > 3000))
        return `${at}.image_url: must be between 1 and 3000 characters`;
      if (typeof raw.alt_text !== "string" || raw.alt_text.length < 1 || raw.alt_text.length > 2000)
        return `${at}.alt_text: must be between 1 and 2000 characters`;
    }
    if (raw.type === "header" && (!textOf(raw.text) || textOf(raw.text).length > 150))
      return `${at}.text: must be between 1 and 150 characters`;
    if (raw.type === "input") {
      if (!textOf(raw.label) || textOf(raw.label).length > 2000)
        return `${at}.label: must be between 1 and 2000 characters`;
      if (!isObject(raw.element)) return `${at}.element: missing required field: element`;
      const bad = elementProblem(raw.element, `${at}.element`, ids);
      if (bad) return bad;
    }
  }
  return null;
}

export function messageBlocksRefusal(blocks: unknown): BlockRefusal | null {
  const problem = blocksProblem(blocks, 50, "blocks");
  return problem ? { error: "invalid_blocks", messages: [`[ERROR] ${problem}`] } : null;
}

export function viewRefusal(view: unknown): BlockRefusal | null {
  const refuse = (problem: string): BlockRefusal => ({ error: "invalid_arguments", messages: [`[ERROR] ${problem}`] });
  if (!isObject(view)) return refuse("view: must be an object");
  if (new TextEncoder().encode(JSON.stringify(view)).length > MAX_VIEW_BYTES)
    return refuse(`view: must be no larger than ${MAX_VIEW_BYTES} bytes of JSON`);
  if (view.type !== "modal") return refuse("view.type: must be modal");
  const title = textOf(view.title);
  if (!title || title.length > 24) return refuse("view.title: must be between 1 and 24 characters");
  if (view.submit !== undefined && (!textOf(view.submit) || textOf(view.submit).length > 24))
    return refuse("view.submit: must be between 1 and 24 characters");
  if (typeof view.callback_id === "string" && view.callback_id.length > 255)
    return refuse("view.callback_id: must be less than 256 characters");
  if (typeof view.private_metadata === "string" && view.private_metadata.length > 3000)
    return refuse("view.private_metadata: must be less than 3001 characters");
  const problem = blocksProblem(view.blocks, 100, "view.blocks");
  if (problem) return refuse(problem);
  if (view.submit === undefined && (view.blocks as Json[]).some((b) => b.type === "input"))
    return refuse("view.submit: required when the view has input blocks");
  return null;
}

/** A copy of `blocks` with the ids Slack generates where they are missing. */
export function withGeneratedIds(blocks: unknown[]): Json[] {
  const element = (e: unknown): unknown =>
    isObject(e) && typeof e.type === "string" && INTERACTIVE.has(e.type) && e.action_id === undefined
      ? { ...e, action_id: randomHex(3) }
      : e;
  return blocks.map((raw) => {
    const b = { ...(raw as Json) };
    if (b.block_id === undefined) b.block_id = randomHex(3);
    if (Array.isArray(b.elements)) b.elements = b.elements.map(element);
    if (b.accessory !== undefined) b.accessory = element(b.accessory);
    if (b.element !== undefined) b.element = element(b.element);
    return b;
  });
}

/** The interactive element with `actionId` in `blocks`, with its block's id. */
export function findElement(blocks: unknown[], actionId: string): { element: Json; blockId: string } | null {
  for (const raw of blocks) {
    if (!isObject(raw)) continue;
    const candidates = [...(Array.isArray(raw.elements) ? raw.elements : []), raw.accessory, raw.element].filter(
      isObject,
    );
    const element = candidates.find((e) => e.action_id === actionId && INTERACTIVE.has(String(e.type)));
    if (element) return { element, blockId: String(raw.block_id ?? "") };
  }
  return null;
}

/** A select's option with `value`, as Slack sends it back (`{ text, value }`). */
export function optionWithValue(element: Json, value: string): Json | null {
  const options = Array.isArray(element.options) ? element.options.filter(isObject) : [];
  return options.find((o) => o.value === value) ?? null;
}
