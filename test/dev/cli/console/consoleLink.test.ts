import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { consoleLinkFor } from "#src/dev/cli/console/consoleLink.ts";
import { saveLogin } from "#src/dev/cli/credentials/credentialsFile.ts";
import { removeWorkDir } from "#test/support/e2e/workDir.ts";

const tmp = mkdtempSync(path.join(tmpdir(), "console-link-"));
afterAll(() => removeWorkDir(tmp));
const file = path.join(tmp, "credentials.json");
saveLogin("http://127.0.0.1:8800", { token: "plt_up", email: "ada@example.com" }, file);
saveLogin("https://api.example.app", { token: "plt_deployed", email: "ada@example.com" }, file);

describe("consoleLinkFor --api: the console of a platform logged in to, signed in", () => {
  it.each([
    ["http://127.0.0.1:8800", {}, "http://127.0.0.1:8800/console/", "plt_up"],
    // One login per API, however its URL is written.
    ["HTTP://127.0.0.1:8800/", {}, "http://127.0.0.1:8800/console/", "plt_up"],
    ["https://api.example.app", {}, "https://api.example.app/console/", "plt_deployed"],
    // CI's token wins over the stored one, as for every command.
    ["https://api.example.app", { PLATFORM_TOKEN: "plt_ci" }, "https://api.example.app/console/", "plt_ci"],
  ])("%s with %o", (api, env, url, token) => {
    expect(consoleLinkFor({ api }, env, file)).toEqual({ url, signedIn: `${url}#token=${token}` });
  });

  it.each([
    [{ api: "http://127.0.0.1:9999" }, /^Not logged in to http:\/\/127\.0\.0\.1:9999: run `platform login --api/, 1],
    [{ api: "not a url" }, /is not a URL/, 2],
    [{ api: "" }, /--api needs a URL/, 2],
    [{ api: "http://127.0.0.1:8800", dir: "." }, /--api or by --dir, not both/, 2],
  ])("refuses %o", (values, message, exitCode) => {
    expect(() => consoleLinkFor(values, {}, file)).toThrow(
      expect.objectContaining({ message: expect.stringMatching(message), exitCode }),
    );
  });
});

describe("consoleLinkFor without --api", () => {
  it("names the folder with no platform dev and says --api is the other way", () => {
    expect(() => consoleLinkFor({ dir: tmp }, {}, file)).toThrow(
      `No \`platform dev\` is running for ${tmp}: start it, pass --dir <project>, or --api URL for a platform you logged in to.`,
    );
  });
});
