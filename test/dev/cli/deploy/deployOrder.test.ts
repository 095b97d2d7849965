import { describe, expect, it } from "vitest";
import {
  type DeployPass,
  DeployOrderError,
  deployOrder,
  type WorkerNode,
  workerDependencies,
} from "#src/dev/cli/deploy/deployOrder.ts";

const service = (target: string, binding = target.toUpperCase()) => ({ target, kind: "service" as const, binding });
const actor = (target: string, binding = "ACTOR") => ({ target, kind: "durable-object" as const, binding });
const full = (worker: string): DeployPass => ({ worker, omitServices: [] });

describe("deployOrder", () => {
  it.each<[string, WorkerNode[], DeployPass[]]>([
    [
      "independent workers keep their preferred order",
      [
        { name: "a", needs: [] },
        { name: "b", needs: [] },
      ],
      [full("a"), full("b")],
    ],
    [
      "a worker waits for the worker it binds to",
      [
        { name: "a", needs: [service("b")] },
        { name: "b", needs: [] },
      ],
      [full("b"), full("a")],
    ],
    [
      "a Durable Object class must be deployed before a script_name binding to it",
      [
        { name: "plugin", needs: [actor("api")] },
        { name: "api", needs: [] },
      ],
      [full("api"), full("plugin")],
    ],
    [
      "the platform: API first without its plugin services, plugins, API in full, login, gateway",
      [
        { name: "api", needs: [service("chat", "CHAT"), service("email", "EMAIL")] },
        { name: "chat", needs: [actor("api", "RATE_LIMITER"), actor("api", "SESSION_CODES")] },
        { name: "email", needs: [actor("api", "RATE_LIMITER")] },
        { name: "login", needs: [] },
        { name: "gateway", needs: [] },
      ],
      [
        { worker: "api", omitServices: ["CHAT", "EMAIL"] },
        full("chat"),
        full("email"),
        full("api"),
        full("login"),
        full("gateway"),
      ],
    ],
    [
      "a service cycle is broken at the earliest worker",
      [
        { name: "a", needs: [service("b")] },
        { name: "b", needs: [service("a")] },
      ],
      [{ worker: "a", omitServices: ["B"] }, full("b"), full("a")],
    ],
    [
      "no first pass for a worker nobody waits for",
      [
        { name: "a", needs: [service("b")] },
        { name: "b", needs: [] },
        { name: "c", needs: [] },
      ],
      [full("b"), full("a"), full("c")],
    ],
    [
      "bindings to workers outside the platform are not ordered",
      [{ name: "a", needs: [service("elsewhere")] }],
      [full("a")],
    ],
    ["a binding to itself is not a dependency", [{ name: "a", needs: [service("a")] }], [full("a")]],
  ])("%s", (_case, workers, expected) => {
    expect(deployOrder(workers)).toEqual(expected);
  });

  it("refuses a cycle of Durable Object bindings, which no first pass can break", () => {
    expect(() =>
      deployOrder([
        { name: "a", needs: [actor("b")] },
        { name: "b", needs: [actor("a")] },
      ]),
    ).toThrow(DeployOrderError);
  });
});

describe("workerDependencies", () => {
  it("reads service bindings and Durable Objects of other scripts, not the worker's own classes", () => {
    expect(
      workerDependencies({
        name: "api",
        services: [{ binding: "CHAT", service: "chat" }],
        durable_objects: {
          bindings: [
            { name: "OWN", class_name: "Own" },
            { name: "SELF", class_name: "Own", script_name: "api" },
            { name: "RATE_LIMITER", class_name: "RateLimiter", script_name: "core" },
          ],
        },
      }),
    ).toEqual([service("chat", "CHAT"), actor("core", "RATE_LIMITER")]);
  });
});
