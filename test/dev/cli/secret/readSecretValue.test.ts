import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { CliError } from "#src/dev/cli/commandLine.ts";
import { readSecretValue, type SecretInput } from "#src/dev/cli/secret/readSecretValue.ts";

function piped(text: string): SecretInput {
  const stream = new PassThrough();
  stream.end(text);
  return stream;
}

/** A terminal: raw mode recorded; `keys` typed once the prompt is shown. */
function terminal(keys: string) {
  const stream = new PassThrough() as PassThrough & SecretInput;
  const modes: boolean[] = [];
  stream.isTTY = true;
  stream.setRawMode = (mode: boolean) => modes.push(mode);
  const shown = new PassThrough();
  let prompt = "";
  shown.on("data", (d) => {
    prompt += d;
    if (!prompt.endsWith("\n")) stream.write(keys);
  });
  return { stream, modes, shown, prompt: () => prompt };
}

describe("readSecretValue", () => {
  it.each([
    ["sk_live_1\n", "sk_live_1"],
    ["sk_live_1\r\n", "sk_live_1"],
    ["sk_live_1", "sk_live_1"],
    ["two\nlines\n", "two\nlines"],
    ["kept trailing space \n", "kept trailing space "],
  ])("piped %j is %j", async (text, value) => {
    expect(await readSecretValue("API_KEY", piped(text))).toBe(value);
  });

  it("at a terminal, reads one line without echo, with Backspace, and leaves raw mode", async () => {
    const tty = terminal("sk_livX\u007fe\r");
    expect(await readSecretValue("API_KEY", tty.stream, tty.shown)).toBe("sk_live");
    expect(tty.modes).toEqual([true, false]);
    expect(tty.prompt()).toBe("Value of API_KEY (not shown): \n");
  });

  it("Ctrl-C at the terminal cancels, storing nothing", async () => {
    const tty = terminal("abc\u0003");
    const error = (await readSecretValue("API_KEY", tty.stream, tty.shown).catch((e: unknown) => e)) as CliError;
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(130);
    expect(tty.modes).toEqual([true, false]);
  });

  it("nothing given is a usage error saying how to give it", async () => {
    const error = (await readSecretValue("API_KEY", piped("\n")).catch((e: unknown) => e)) as CliError;
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(
      'No value for API_KEY: type it at the prompt, or pipe it in (printf %s "$VALUE" | platform secret put API_KEY).',
    );
  });
});
