import { expect, it } from "vitest";
it("runs in node 22", () => { expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22); });
