import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";
import { PLATFORM_ROOT_PATHS, RESERVED_SLUGS } from "#src/workers/api/reservedSlugs.ts";

describe("reserved slugs", () => {
  // RFC 2142 sections 3 to 5, every mailbox, and MAILER-DAEMON: a tenant's mail would come from `<slug>@<domain>`.
  it.each([
    ..."info marketing sales support".split(" "),
    ..."abuse noc security".split(" "),
    ..."postmaster hostmaster usenet news webmaster www uucp ftp".split(" "),
    "mailer-daemon",
  ])("reserves the RFC 2142 mailbox %s", (name) => {
    expect(RESERVED_SLUGS.has(name)).toBe(true);
  });

  // The console is static files under its folder of the API worker's assets.
  it.each(readdirSync(path.join(REPO_ROOT, "src/console/public")).filter((entry) => !entry.startsWith("_")))(
    "reserves %s, a folder of the console's static files at the API's root",
    (entry) => {
      expect(PLATFORM_ROOT_PATHS.has(entry)).toBe(true);
    },
  );
});
