import { SELF } from "cloudflare:test";
import { expect, it } from "vitest";
it("runs in workerd", async () => {
  const r = await SELF.fetch("http://x/");
  expect(await r.text()).toBe("harness");
});
