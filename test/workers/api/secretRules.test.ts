import { describe, expect, it } from "vitest";
import { PROJECT_DURABLE_OBJECTS } from "#src/contracts/projectDurableObjects.ts";
import { projectScriptBindings } from "#src/workers/api/projectScriptBindings.ts";
import { checkSecretName, RESERVED_BINDING_NAMES } from "#src/workers/api/secretRules.ts";
import { thrown } from "#test/support/workflow/rejection.ts";

// Every binding a project script gets, as an upload names them: a secret of any of these names would clash.
const everyBinding = projectScriptBindings(
  { id: 7, slug: "shop", script_name: "proj-shop", worker_secret: "s" },
  Object.keys(PROJECT_DURABLE_OBJECTS),
  "https://login.example.test",
  "v3",
).map((binding) => binding.name);

describe("secret names: none may clash with a binding the platform gives every project", () => {
  it("reserves every binding of the upload (the workflow actors' included)", () => {
    expect(everyBinding).toContain("WORKFLOW_FLOW_KEYS");
    for (const name of everyBinding) {
      if (!/^PLATFORM_/.test(name)) expect(RESERVED_BINDING_NAMES.has(name), name).toBe(true);
    }
  });

  it.each(everyBinding)("refuses %s, naming the clash", (name) => {
    const error = thrown(() => checkSecretName(name));
    expect(error.code).toBe("invalid_input");
    expect(error.message).toMatch(
      /^PLATFORM_/.test(name)
        ? /names starting with PLATFORM_ are the platform's own/
        : /is a binding the platform gives every project/,
    );
  });

  // The attack: a secret named after the flow key actors' binding broke every later push ("binding name used more than once").
  it("refuses WORKFLOW_FLOW_KEYS with the reason, and takes a name beside it", () => {
    expect(thrown(() => checkSecretName("WORKFLOW_FLOW_KEYS")).message).toBe(
      `WORKFLOW_FLOW_KEYS is a binding the platform gives every project (its plugins and its workflow actors: ${[...RESERVED_BINDING_NAMES].join(", ")}); a secret of that name would clash with it. Choose another name.`,
    );
    expect(checkSecretName("WORKFLOW_FLOW_KEYS_TOKEN")).toBe("WORKFLOW_FLOW_KEYS_TOKEN");
  });
});
