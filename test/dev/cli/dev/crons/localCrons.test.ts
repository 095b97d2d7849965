import { describe, expect, it } from "vitest";
import { dueCrons, localCrons } from "#src/dev/cli/dev/crons/localCrons.ts";

describe("localCrons", () => {
  it("lists each worker's cron triggers", () => {
    expect(
      localCrons([
        { name: "platform-api", script: "", cronTriggers: ["* * * * *", "0 3 * * *"] },
        { name: "platform-gateway", script: "" },
      ]),
    ).toEqual([
      { worker: "platform-api", cron: "* * * * *" },
      { worker: "platform-api", cron: "0 3 * * *" },
    ]);
  });
});

describe("dueCrons", () => {
  const crons = [
    { worker: "platform-api", cron: "* * * * *" },
    { worker: "platform-api", cron: "0 3 * * *" },
    { worker: "platform-plugin-chatserver", cron: "*/5 * * * *" },
  ];
  it.each([
    ["2026-11-25T10:01:00Z", ["* * * * *"]],
    ["2026-11-25T10:05:00Z", ["* * * * *", "*/5 * * * *"]],
    // Seconds into the minute still count as that minute, in UTC.
    ["2026-11-25T03:00:42Z", ["* * * * *", "0 3 * * *", "*/5 * * * *"]],
  ])("at %s runs %j", (at, due) => {
    expect(dueCrons(crons, new Date(at)).map((c) => c.cron)).toEqual(due);
  });
});
