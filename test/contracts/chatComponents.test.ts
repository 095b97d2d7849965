import { describe, expect, it } from "vitest";
import {
  fromWireComponents,
  modalFieldsFromWire,
  toWireComponents,
  toWireModal,
} from "#src/contracts/chatComponents.ts";

describe("components as user code writes them and as the chat server takes them", () => {
  const approve = { type: "button", customId: "approve:run-1", label: "Approve", style: "success" } as const;
  const docs = { type: "button", url: "https://example.com/runbook", label: "Runbook" } as const;
  const select = {
    type: "select",
    customId: "env",
    placeholder: "Where?",
    options: [
      { label: "Staging", value: "staging" },
      { label: "Production", value: "prod", description: "careful" },
    ],
    maxValues: 2,
  } as const;

  it("a flat array is one row; a link button has a url and style 5; a select takes its own row", () => {
    expect(toWireComponents([approve, docs])).toEqual([
      {
        type: 1,
        components: [
          { type: 2, style: 3, label: "Approve", custom_id: "approve:run-1" },
          { type: 2, style: 5, label: "Runbook", url: "https://example.com/runbook" },
        ],
      },
    ]);
    expect(toWireComponents([[approve], [select]])[1]).toEqual({
      type: 1,
      components: [
        {
          type: 3,
          custom_id: "env",
          options: [
            { label: "Staging", value: "staging" },
            { label: "Production", value: "prod", description: "careful" },
          ],
          placeholder: "Where?",
          max_values: 2,
        },
      ],
    });
    expect(toWireComponents([])).toEqual([]);
  });

  it("a received message's components come back in the written shape", () => {
    expect(fromWireComponents(toWireComponents([[approve, docs], [select]]))).toEqual([
      [
        { type: "button", label: "Approve", customId: "approve:run-1", style: "success" },
        { type: "button", label: "Runbook", url: "https://example.com/runbook", style: "link" },
      ],
      [
        {
          type: "select",
          customId: "env",
          options: [
            { label: "Staging", value: "staging" },
            { label: "Production", value: "prod" },
          ],
          placeholder: "Where?",
          maxValues: 2,
        },
      ],
    ]);
  });

  it.each([
    [[{ type: "link", label: "x" }], 'components[0].type must be "button" or "select".'],
    [[[approve], approve], "components mixes rows (arrays) and components: give rows only, or one flat row."],
    [[[]], "components[0] is an empty row."],
    [
      [{ ...approve, style: "blurple" }],
      "components[0].style must be one of primary, secondary, success, danger, link.",
    ],
    [
      [{ type: "button", label: "x", url: "javascript:alert(1)" }],
      "components[0].url must be an http(s) or discord:// URL.",
    ],
    [
      [{ ...select, options: [select.options[0], select.options[0]] }],
      "components[0].options[1].value repeats another option's value.",
    ],
    [[{ ...select, maxValues: 3 }], "components[0].maxValues must not exceed the number of options."],
    [[{ ...approve, disabled: "yes" }], "components[0].disabled must be true or false."],
  ])("%j is refused: %s", (components, message) => {
    expect(() => toWireComponents(components)).toThrow(message);
  });

  it("a modal: one text input per row, paragraph style 2, required kept; the submit's values by customId", () => {
    const modal = toWireModal({
      customId: "why:run-1",
      title: "Why?",
      fields: [
        { customId: "reason", label: "Reason", style: "paragraph", maxLength: 500 },
        { customId: "ticket", label: "Ticket", required: false, value: "T-" },
      ],
    });
    expect(modal).toEqual({
      custom_id: "why:run-1",
      title: "Why?",
      components: [
        { type: 1, components: [{ type: 4, custom_id: "reason", label: "Reason", style: 2, max_length: 500 }] },
        {
          type: 1,
          components: [{ type: 4, custom_id: "ticket", label: "Ticket", style: 1, required: false, value: "T-" }],
        },
      ],
    });
    expect(
      modalFieldsFromWire([
        { type: 1, components: [{ type: 4, custom_id: "reason", value: "Friday" }] },
        { type: 18, component: { type: 4, custom_id: "ticket", value: "T-1" } },
      ]),
    ).toEqual({ reason: "Friday", ticket: "T-1" });
    expect(() =>
      toWireModal({
        customId: "m",
        title: "T",
        fields: [
          { customId: "a", label: "A" },
          { customId: "a", label: "B" },
        ],
      }),
    ).toThrow("modal.fields[1].customId repeats another field's customId.");
  });
});
