/**
 * The chat server's own rules for message components and modals (Discord's
 * documented limits), as the fake enforces them: what breaks one is answered
 * 400 with code 50035 "Invalid Form Body" and an `errors` tree naming the
 * field, as the provider does. The platform checks the same limits before
 * sending (src/contracts/chatComponents.ts); these are the provider's side,
 * written from its documentation, not from that code.
 */

/** Component types on the wire. */
export const COMPONENT = { row: 1, button: 2, stringSelect: 3, textInput: 4, label: 18 } as const;
const SELECT_TYPES = new Set([3, 5, 6, 7, 8]);

export interface FormProblem {
  path: (string | number)[];
  code: string;
  message: string;
}

const problem = (path: (string | number)[], code: string, message: string): FormProblem => ({ path, code, message });

/** The `errors` tree of a 50035 answer: `{ components: { 0: { custom_id: { _errors: [...] } } } }`. */
export function errorTree(p: FormProblem): Record<string, unknown> {
  let tree: Record<string, unknown> = { _errors: [{ code: p.code, message: p.message }] };
  for (const key of [...p.path].reverse()) tree = { [String(key)]: tree };
  return tree;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => Boolean(v) && typeof v === "object" && !Array.isArray(v);

function stringProblem(value: unknown, path: (string | number)[], min: number, max: number): FormProblem | null {
  if (typeof value !== "string") return problem(path, "BASE_TYPE_STRING", "Must be a string.");
  if (value.length < min || value.length > max)
    return problem(path, "BASE_TYPE_BAD_LENGTH", `Must be between ${min} and ${max} in length.`);
  return null;
}

function intProblem(value: unknown, path: (string | number)[], min: number, max: number): FormProblem | null {
  if (value === undefined) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max)
    return problem(path, "NUMBER_TYPE_MIN_MAX", `int value should be between ${min} and ${max}.`);
  return null;
}

function buttonProblem(b: Json, at: (string | number)[]): FormProblem | null {
  const style = b.style;
  if (typeof style !== "number" || style < 1 || style > 6)
    return problem([...at, "style"], "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3, 4, 5, 6).");
  if (b.label !== undefined || b.emoji === undefined) {
    const label = stringProblem(b.label, [...at, "label"], 1, 80);
    if (label) return label;
  }
  if (style === 5) {
    if (b.custom_id !== undefined)
      return problem(
        [...at, "custom_id"],
        "BUTTON_COMPONENT_CUSTOM_ID_WITH_URL",
        "A link button cannot have a custom_id.",
      );
    return stringProblem(b.url, [...at, "url"], 1, 512);
  }
  if (b.url !== undefined)
    return problem([...at, "url"], "BUTTON_COMPONENT_URL_WITH_CUSTOM_ID", "Only link buttons may have a url.");
  if (style === 6) return null;
  return stringProblem(b.custom_id, [...at, "custom_id"], 1, 100);
}

function selectProblem(s: Json, at: (string | number)[]): FormProblem | null {
  const id = stringProblem(s.custom_id, [...at, "custom_id"], 1, 100);
  if (id) return id;
  if (s.placeholder !== undefined) {
    const placeholder = stringProblem(s.placeholder, [...at, "placeholder"], 0, 150);
    if (placeholder) return placeholder;
  }
  const counts =
    intProblem(s.min_values, [...at, "min_values"], 0, 25) ?? intProblem(s.max_values, [...at, "max_values"], 1, 25);
  if (counts) return counts;
  if (s.type !== COMPONENT.stringSelect) return null;
  if (!Array.isArray(s.options) || s.options.length < 1 || s.options.length > 25)
    return problem([...at, "options"], "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 25 in length.");
  for (const [i, raw] of s.options.entries()) {
    const o = isObject(raw) ? raw : {};
    const bad =
      stringProblem(o.label, [...at, "options", i, "label"], 1, 100) ??
      stringProblem(o.value, [...at, "options", i, "value"], 1, 100) ??
      (o.description === undefined ? null : stringProblem(o.description, [...at, "options", i, "description"], 0, 100));
    if (bad) return bad;
  }
  if (typeof s.max_values === "number" && s.max_values > s.options.length)
    return problem(
      [...at, "max_values"],
      "SELECT_COMPONENT_TOO_MANY_VALUES",
      "max_values exceeds the number of options.",
    );
  return null;
}

/** The first rule a message's `components` break, or null. */
export function messageComponentsProblem(components: unknown[]): FormProblem | null {
  if (components.length > 5) return problem(["components"], "BASE_TYPE_BAD_LENGTH", "Must be 5 or fewer in length.");
  const ids = new Set<string>();
  for (const [r, rawRow] of components.entries()) {
    const row = isObject(rawRow) ? rawRow : {};
    const at = ["components", r];
    if (row.type !== COMPONENT.row)
      return problem([...at, "type"], "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).');
    const children = row.components;
    if (!Array.isArray(children) || children.length < 1 || children.length > 5)
      return problem([...at, "components"], "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.");
    const selects = children.filter((c) => isObject(c) && SELECT_TYPES.has(c.type as number)).length;
    if (selects && children.length > 1)
      return problem(
        [...at, "components"],
        "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
        "The specified component exceeds the maximum width",
      );
    for (const [c, rawChild] of children.entries()) {
      const child = isObject(rawChild) ? rawChild : {};
      const path = [...at, "components", c];
      const bad =
        child.type === COMPONENT.button
          ? buttonProblem(child, path)
          : SELECT_TYPES.has(child.type as number)
            ? selectProblem(child, path)
            : problem(
                [...path, "type"],
                "COMPONENT_TYPE_INVALID",
                "Component type is not valid in a message action row.",
              );
      if (bad) return bad;
      if (typeof child.custom_id === "string") {
        if (ids.has(child.custom_id))
          return problem(
            [...path, "custom_id"],
            "COMPONENT_CUSTOM_ID_DUPLICATED",
            "Component custom id cannot be duplicated",
          );
        ids.add(child.custom_id);
      }
    }
  }
  return null;
}

/** A modal's text inputs: in action rows (one each) or, the newer layout, in labels. */
export function modalInputs(components: unknown[]): Json[] {
  return components.flatMap((raw) => {
    const node = isObject(raw) ? raw : {};
    if (node.type === COMPONENT.label && isObject(node.component)) return [node.component];
    return Array.isArray(node.components) ? node.components.filter(isObject) : [];
  });
}

/** The first rule a modal (interaction callback 9's data) breaks, or null. */
export function modalProblem(data: unknown): FormProblem | null {
  const m = isObject(data) ? data : {};
  const top =
    stringProblem(m.custom_id, ["data", "custom_id"], 1, 100) ?? stringProblem(m.title, ["data", "title"], 1, 45);
  if (top) return top;
  if (!Array.isArray(m.components) || m.components.length < 1 || m.components.length > 5)
    return problem(["data", "components"], "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.");
  const ids = new Set<string>();
  for (const [r, raw] of m.components.entries()) {
    const node = isObject(raw) ? raw : {};
    const at = ["data", "components", r];
    const inputs =
      node.type === COMPONENT.label ? [node.component] : node.type === COMPONENT.row ? node.components : null;
    if (!Array.isArray(inputs) || inputs.length !== 1)
      return problem([...at, "components"], "BASE_TYPE_BAD_LENGTH", "A modal row holds exactly one text input.");
    const input = isObject(inputs[0]) ? inputs[0] : {};
    const path = [...at, "components", 0];
    if (input.type !== COMPONENT.textInput)
      return problem([...path, "type"], "COMPONENT_TYPE_INVALID", "Only text inputs go in a modal.");
    const bad =
      stringProblem(input.custom_id, [...path, "custom_id"], 1, 100) ??
      (node.type === COMPONENT.label ? null : stringProblem(input.label, [...path, "label"], 1, 45)) ??
      (input.style === 1 || input.style === 2
        ? null
        : problem([...path, "style"], "BASE_TYPE_CHOICES", "Value must be one of (1, 2).")) ??
      intProblem(input.min_length, [...path, "min_length"], 0, 4000) ??
      intProblem(input.max_length, [...path, "max_length"], 1, 4000) ??
      (input.value === undefined ? null : stringProblem(input.value, [...path, "value"], 0, 4000)) ??
      (input.placeholder === undefined ? null : stringProblem(input.placeholder, [...path, "placeholder"], 0, 100));
    if (bad) return bad;
    if (ids.has(input.custom_id as string))
      return problem(
        [...path, "custom_id"],
        "COMPONENT_CUSTOM_ID_DUPLICATED",
        "Component custom id cannot be duplicated",
      );
    ids.add(input.custom_id as string);
  }
  return null;
}

/** The component of a message's rows whose custom_id is `customId`, if any. */
export function findComponent(components: unknown[], customId: string): Json | null {
  for (const row of components) {
    const children = isObject(row) && Array.isArray(row.components) ? row.components : [];
    for (const child of children) if (isObject(child) && child.custom_id === customId) return child;
  }
  return null;
}
