import { CliError } from "../commandLine.ts";

/** What the value is read from: standard input, a terminal or a pipe. */
export interface SecretInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/**
 * A secret's value from standard input: typed at a terminal without echo
 * (Enter ends it, Backspace edits, Ctrl-C cancels), or piped, all of it with
 * one trailing newline dropped (`echo "$KEY" | …` means the key). Empty is
 * a usage error: nothing was given.
 */
export async function readSecretValue(
  name: string,
  input: SecretInput = process.stdin,
  prompt: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  const value = input.isTTY && input.setRawMode ? await readHidden(name, input, prompt) : await readPiped(input);
  if (value === "")
    throw new CliError(
      `No value for ${name}: type it at the prompt, or pipe it in (printf %s "$VALUE" | platform secret put ${name}).`,
      2,
    );
  return value;
}

async function readPiped(input: SecretInput): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

function readHidden(name: string, input: SecretInput, prompt: NodeJS.WritableStream): Promise<string> {
  prompt.write(`Value of ${name} (not shown): `);
  input.setRawMode!(true);
  input.resume();
  return new Promise((resolve, reject) => {
    let typed = "";
    const end = (done: () => void) => {
      input.setRawMode!(false);
      input.pause();
      input.removeListener("data", onData);
      prompt.write("\n");
      done();
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === "\r" || char === "\n" || char === "\u0004") return end(() => resolve(typed));
        if (char === "\u0003") return end(() => reject(new CliError("Cancelled: no secret was stored.", 130)));
        if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    input.on("data", onData);
  });
}
