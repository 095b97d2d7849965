import { PlatformError } from "../core/errors.ts";

/**
 * Buttons, select menus and modals of the chat server (Discord's message
 * components), as user code writes them and as the provider takes them. The
 * runtime checks them before any call and the plugin again on arrival, with
 * the provider's own limits, so an oversized or malformed component is an
 * `invalid_input` naming the field instead of the provider's 50035.
 *
 *   { type: "button", customId | url, label, style?, disabled? }
 *   { type: "select", customId, options: [{ label, value, description?, default? }], placeholder?,
 *     minValues?, maxValues?, disabled? }
 * `components` is an array of rows (arrays) or a flat array taken as one row;
 * a row holds up to 5 buttons or one select; a message up to 5 rows.
 */

export type ChatButtonStyle = "primary" | "secondary" | "success" | "danger" | "link";

/**
 * @example
 * const approve: ChatButton = { type: "button", customId: `approve:${runId}`, label: "Approve", style: "success" };
 */
export interface ChatButton {
  type: "button";
  label: string;
  /** What `chatserver.onComponent` matches (`name` or `name:…`); a link button has `url` instead. */
  customId?: string;
  url?: string;
  /** Default "primary"; "link" with `url` (which implies it). */
  style?: ChatButtonStyle;
  disabled?: boolean;
}

/**
 * @example
 * const option: ChatSelectOption = { label: "Production", value: "production" };
 */
export interface ChatSelectOption {
  label: string;
  value: string;
  description?: string;
  default?: boolean;
}

/**
 * @example
 * const env: ChatSelect = { type: "select", customId: "env", placeholder: "Environment", options: [{ label: "Staging", value: "staging" }, { label: "Production", value: "production" }] };
 */
export interface ChatSelect {
  type: "select";
  customId: string;
  options: ChatSelectOption[];
  placeholder?: string;
  /** How many options a user picks: default 1 and 1. */
  minValues?: number;
  maxValues?: number;
  disabled?: boolean;
}

/**
 * @example
 * const row: ChatComponent[] = [{ type: "button", customId: "yes", label: "Yes" }, { type: "button", customId: "no", label: "No" }];
 */
export type ChatComponent = ChatButton | ChatSelect;
/**
 * Rows of components, or one row given flat.
 * @example
 * const components: ChatComponents = [[{ type: "button", customId: "yes", label: "Yes" }]];
 */
export type ChatComponents = ChatComponent[] | ChatComponent[][];

/**
 * @example
 * const field: ChatModalField = { customId: "reason", label: "Why?", style: "short", required: true };
 */
export interface ChatModalField {
  customId: string;
  label: string;
  /** One line ("short", the default) or several ("paragraph"). */
  style?: "short" | "paragraph";
  /** Default true, as on the chat server. */
  required?: boolean;
  placeholder?: string;
  /** Pre-filled text. */
  value?: string;
  minLength?: number;
  maxLength?: number;
}

/**
 * @example
 * const modal: ChatModal = { customId: "feedback", title: "Feedback", fields: [{ customId: "text", label: "Your feedback", style: "paragraph" }] };
 */
export interface ChatModal {
  customId: string;
  title: string;
  fields: ChatModalField[];
}

/** The provider's limits (Discord's documented component and modal limits). */
export const CHAT_COMPONENT_LIMITS = {
  rows: 5,
  buttonsPerRow: 5,
  customIdChars: 100,
  buttonLabelChars: 80,
  urlChars: 512,
  selectOptions: 25,
  optionLabelChars: 100,
  optionValueChars: 100,
  optionDescriptionChars: 100,
  placeholderChars: 150,
  modalTitleChars: 45,
  modalFields: 5,
  fieldLabelChars: 45,
  fieldPlaceholderChars: 100,
  fieldValueChars: 4000,
} as const;

const L = CHAT_COMPONENT_LIMITS;

/** Component type numbers on the wire. */
export const WIRE = { row: 1, button: 2, stringSelect: 3, textInput: 4, label: 18 } as const;

export const BUTTON_STYLES: Record<ChatButtonStyle, number> = {
  primary: 1,
  secondary: 2,
  success: 3,
  danger: 4,
  link: 5,
};

export interface WireRow {
  type: 1;
  components: Record<string, unknown>[];
}

/** The wire form of a modal (interaction callback type 9's data). */
export interface WireModal {
  custom_id: string;
  title: string;
  components: WireRow[];
}

function invalid(path: string, rule: string): PlatformError {
  return new PlatformError("invalid_input", `${path} ${rule}.`);
}

function text(value: unknown, path: string, max: number, { min = 1 }: { min?: number } = {}): string {
  if (typeof value !== "string" || value.length < min || value.length > max)
    throw invalid(
      path,
      min === 0 ? `must be a string of at most ${max} characters` : `must be ${min}–${max} characters`,
    );
  return value;
}

function optionalText(value: unknown, path: string, max: number): string | undefined {
  return value === undefined ? undefined : text(value, path, max);
}

function optionalBoolean(value: unknown, path: string): boolean | undefined {
  if (value !== undefined && typeof value !== "boolean") throw invalid(path, "must be true or false");
  return value;
}

function count(value: unknown, path: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
    throw invalid(path, `must be a whole number from ${min} to ${max}`);
  return value;
}

/** A `customId`: 1–100 characters (what a component's handler is matched by). */
export function requireCustomId(value: unknown, path: string): string {
  return text(value, path, L.customIdChars);
}

function record(value: unknown, path: string): Record<string, unknown> {
  if (!value || typeof value !== "object" || Array.isArray(value)) throw invalid(path, "must be an object");
  return value as Record<string, unknown>;
}

/** An array of 1–`max` objects (a select's options, a modal's fields), each checked by `check` at its own path. */
function records<T>(
  value: unknown,
  path: string,
  max: number,
  noun: string,
  check: (item: Record<string, unknown>, at: string) => T,
): T[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > max)
    throw invalid(path, `must be an array of 1–${max} ${noun}`);
  return value.map((raw, i) => {
    const at = `${path}[${i}]`;
    return check(record(raw, at), at);
  });
}

/** A check that lets each key through once; a key seen before breaks `rule` ("repeats another option's value"). */
function onceEach(rule: string): (key: string, path: string) => string {
  const seen = new Set<string>();
  return (key, path) => {
    if (seen.has(key)) throw invalid(path, rule);
    seen.add(key);
    return key;
  };
}

function wireButton(value: Record<string, unknown>, path: string): Record<string, unknown> {
  const label = text(value.label, `${path}.label`, L.buttonLabelChars);
  const disabled = optionalBoolean(value.disabled, `${path}.disabled`);
  const style = value.style ?? (value.url !== undefined ? "link" : "primary");
  if (typeof style !== "string" || !(style in BUTTON_STYLES))
    throw invalid(`${path}.style`, `must be one of ${Object.keys(BUTTON_STYLES).join(", ")}`);
  const common = { type: WIRE.button, label, ...(disabled !== undefined ? { disabled } : {}) };
  if (style === "link") {
    if (value.customId !== undefined) throw invalid(path, "is a link button: it takes url, not customId");
    const url = text(value.url, `${path}.url`, L.urlChars);
    if (!/^(https?|discord):\/\/\S+$/.test(url)) throw invalid(`${path}.url`, "must be an http(s) or discord:// URL");
    return { ...common, style: BUTTON_STYLES.link, url };
  }
  if (value.url !== undefined) throw invalid(path, `has a url, so its style must be "link"`);
  const customId = requireCustomId(value.customId, `${path}.customId`);
  return { ...common, style: BUTTON_STYLES[style as ChatButtonStyle], custom_id: customId };
}

function wireSelect(value: Record<string, unknown>, path: string): Record<string, unknown> {
  const customId = requireCustomId(value.customId, `${path}.customId`);
  const uniqueValue = onceEach("repeats another option's value");
  const options = records(value.options, `${path}.options`, L.selectOptions, "options", (option, at) => {
    const optionValue = uniqueValue(text(option.value, `${at}.value`, L.optionValueChars), `${at}.value`);
    const description = optionalText(option.description, `${at}.description`, L.optionDescriptionChars);
    const isDefault = optionalBoolean(option.default, `${at}.default`);
    return {
      label: text(option.label, `${at}.label`, L.optionLabelChars),
      value: optionValue,
      ...(description !== undefined ? { description } : {}),
      ...(isDefault !== undefined ? { default: isDefault } : {}),
    };
  });
  const placeholder = optionalText(value.placeholder, `${path}.placeholder`, L.placeholderChars);
  const minValues = count(value.minValues, `${path}.minValues`, 0, L.selectOptions);
  const maxValues = count(value.maxValues, `${path}.maxValues`, 1, L.selectOptions);
  if ((maxValues ?? 1) > options.length) throw invalid(`${path}.maxValues`, "must not exceed the number of options");
  if ((minValues ?? 1) > (maxValues ?? 1)) throw invalid(`${path}.minValues`, "must not exceed maxValues");
  const disabled = optionalBoolean(value.disabled, `${path}.disabled`);
  return {
    type: WIRE.stringSelect,
    custom_id: customId,
    options,
    ...(placeholder !== undefined ? { placeholder } : {}),
    ...(minValues !== undefined ? { min_values: minValues } : {}),
    ...(maxValues !== undefined ? { max_values: maxValues } : {}),
    ...(disabled !== undefined ? { disabled } : {}),
  };
}

/**
 * Checks `components` (rows, or one flat row) and answers the provider's
 * action rows. An empty array is allowed (it removes a message's components).
 */
export function toWireComponents(value: unknown, path = "components"): WireRow[] {
  if (!Array.isArray(value)) throw invalid(path, "must be an array of components, or of rows of components");
  const nested = value.filter((item) => Array.isArray(item)).length;
  if (nested && nested !== value.length)
    throw invalid(path, "mixes rows (arrays) and components: give rows only, or one flat row");
  const rows: unknown[][] = nested ? (value as unknown[][]) : value.length ? [value] : [];
  if (rows.length > L.rows) throw invalid(path, `must have at most ${L.rows} rows (got ${rows.length})`);
  const customIds = new Set<string>();
  return rows.map((row, r) => {
    const rowPath = nested ? `${path}[${r}]` : path;
    if (row.length < 1) throw invalid(rowPath, "is an empty row");
    const components = row.map((raw, c) => {
      const at = `${rowPath}[${c}]`;
      const component = record(raw, at);
      if (component.type === "button") return wireButton(component, at);
      if (component.type === "select") return wireSelect(component, at);
      throw invalid(`${at}.type`, `must be "button" or "select"`);
    });
    const selects = components.filter((c) => c.type === WIRE.stringSelect).length;
    if (selects && components.length > 1) throw invalid(rowPath, "holds a select, which takes a whole row");
    if (components.length > L.buttonsPerRow)
      throw invalid(rowPath, `must have at most ${L.buttonsPerRow} buttons (got ${components.length})`);
    for (const component of components) {
      const id = component.custom_id as string | undefined;
      if (id === undefined) continue;
      if (customIds.has(id)) throw invalid(path, `repeats the customId ${JSON.stringify(id)}: each must be unique`);
      customIds.add(id);
    }
    return { type: WIRE.row, components } satisfies WireRow;
  });
}

/** Checks a modal and answers its wire form: 1–5 text fields, each in its own row. */
export function toWireModal(value: unknown, path = "modal"): WireModal {
  const modal = record(value, path);
  const customId = requireCustomId(modal.customId, `${path}.customId`);
  const title = text(modal.title, `${path}.title`, L.modalTitleChars);
  const uniqueId = onceEach("repeats another field's customId");
  const components = records(modal.fields, `${path}.fields`, L.modalFields, "fields", (field, at) => {
    const id = uniqueId(requireCustomId(field.customId, `${at}.customId`), `${at}.customId`);
    const style = field.style ?? "short";
    if (style !== "short" && style !== "paragraph") throw invalid(`${at}.style`, `must be "short" or "paragraph"`);
    const required = optionalBoolean(field.required, `${at}.required`);
    const placeholder = optionalText(field.placeholder, `${at}.placeholder`, L.fieldPlaceholderChars);
    const minLength = count(field.minLength, `${at}.minLength`, 0, L.fieldValueChars);
    const maxLength = count(field.maxLength, `${at}.maxLength`, 1, L.fieldValueChars);
    if (minLength !== undefined && maxLength !== undefined && minLength > maxLength)
      throw invalid(`${at}.minLength`, "must not exceed maxLength");
    const prefilled =
      field.value === undefined ? undefined : text(field.value, `${at}.value`, maxLength ?? L.fieldValueChars);
    return {
      type: WIRE.row,
      components: [
        {
          type: WIRE.textInput,
          custom_id: id,
          label: text(field.label, `${at}.label`, L.fieldLabelChars),
          style: style === "short" ? 1 : 2,
          ...(required !== undefined ? { required } : {}),
          ...(placeholder !== undefined ? { placeholder } : {}),
          ...(prefilled !== undefined ? { value: prefilled } : {}),
          ...(minLength !== undefined ? { min_length: minLength } : {}),
          ...(maxLength !== undefined ? { max_length: maxLength } : {}),
        },
      ],
    } satisfies WireRow;
  });
  return { custom_id: customId, title, components };
}

const STYLE_NAMES = Object.fromEntries(Object.entries(BUTTON_STYLES).map(([name, n]) => [n, name])) as Record<
  number,
  ChatButtonStyle
>;

/** A received message's components in the shape user code writes (what a handler's `message.components` holds). */
export function fromWireComponents(value: unknown): ChatComponent[][] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((row) => {
    const children = (row as { components?: unknown } | null)?.components;
    if (!Array.isArray(children)) return [];
    const components = children.flatMap((raw): ChatComponent[] => {
      const c = (raw ?? {}) as Record<string, unknown>;
      const disabled = c.disabled === true ? { disabled: true } : {};
      if (c.type === WIRE.button && typeof c.label === "string") {
        const style = STYLE_NAMES[Number(c.style)] ?? "primary";
        return typeof c.url === "string"
          ? [{ type: "button", label: c.label, url: c.url, style: "link", ...disabled }]
          : [{ type: "button", label: c.label, customId: String(c.custom_id ?? ""), style, ...disabled }];
      }
      if (c.type === WIRE.stringSelect && Array.isArray(c.options)) {
        return [
          {
            type: "select",
            customId: String(c.custom_id ?? ""),
            options: c.options.map((o: { label?: unknown; value?: unknown }) => ({
              label: String(o?.label ?? ""),
              value: String(o?.value ?? ""),
            })),
            ...(typeof c.placeholder === "string" ? { placeholder: c.placeholder } : {}),
            ...(typeof c.min_values === "number" ? { minValues: c.min_values } : {}),
            ...(typeof c.max_values === "number" ? { maxValues: c.max_values } : {}),
            ...disabled,
          },
        ];
      }
      return [];
    });
    return components.length ? [components] : [];
  });
}

/**
 * A modal submit's values by field `customId`, from its components: rows of
 * text inputs, or (the newer layout) labels each holding one input.
 */
export function modalFieldsFromWire(value: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  const visit = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    const c = node as {
      type?: unknown;
      custom_id?: unknown;
      value?: unknown;
      components?: unknown;
      component?: unknown;
    };
    if (c.type === WIRE.textInput && typeof c.custom_id === "string") fields[c.custom_id] = String(c.value ?? "");
    if (Array.isArray(c.components)) for (const child of c.components) visit(child);
    if (c.component) visit(c.component);
  };
  if (Array.isArray(value)) for (const node of value) visit(node);
  return fields;
}
