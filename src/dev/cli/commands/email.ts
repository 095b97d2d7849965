import { CliError, cliOptions, type Command } from "../commandLine.ts";
import { htmlAsText } from "../email/htmlAsText.ts";
import { callPlatformApi, resolvePlatformTarget } from "../platformTarget.ts";

/** What `GET /projects/:slug/outbox[/:id]` answers (src/dev/routes/localOutbox.ts). */
interface OutboxSummary {
  id: string;
  from: string;
  to: string[];
  subject: string;
  sentAt: string;
}
interface OutboxEmail extends OutboxSummary {
  html: string;
  /** The plain-text body (shown when there is no html). */
  text?: string | null;
}

/** Subjects and addresses come from project code: no terminal escapes, one line. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ");
}

const UP_OUTBOX =
  "platform email reads the local outbox of `platform dev` (--dir). `platform up` serves only the deployed API's routes: what its projects send stays with the fake email provider, at the outbox address `platform up` printed when it started, which answers only the operator token it printed beside it.";

export const emailCommand: Command = {
  summary: "Read the emails a project sent under `platform dev` (the local outbox).",
  usage: "platform email list | platform email show <id>   [--dir d] [--json]",
  help: `
list   the emails the project sent, newest first (at most 100), one line
       each: time, id, to, subject
show   one email: its headers, then its html as text

Under \`platform dev\` the email-send plugin hands email to a local fake
provider, which keeps every email it accepted (in .platform/state, so they
survive restarts) instead of delivering it. The console's Outbox tab shows
the same emails rendered. Targets the \`platform dev\` running for --dir
(default: the current directory). --json prints the raw answer.

\`platform up\` answers only the deployed API's routes, which have no
outbox: there, what projects send stays with the fake email provider, whose
outbox address \`platform up\` prints when it starts (send the operator
token it prints beside it).`,
  options: cliOptions({ strings: ["dir", "api"], booleans: ["json"] }),
  async run({ positionals, values }) {
    const [action, id, ...extra] = positionals;
    if (extra.length) throw new CliError(`Unexpected arguments: ${extra.join(" ")}`, 2);
    if (action !== "list" && action !== "show")
      throw new CliError(`Unknown email action "${action ?? ""}": use list or show.`, 2);
    if (action === "list" && id) throw new CliError("platform email list takes no id.", 2);
    if (action === "show" && !id)
      throw new CliError("platform email show needs an email id (see platform email list).", 2);
    if (values.api !== undefined) throw new CliError(UP_OUTBOX, 2);
    // Usage errors first: they exit 2 whether or not a platform is running.
    const target = resolvePlatformTarget(values);
    const outbox = `/projects/${encodeURIComponent(target.slug)}/outbox`;
    if (action === "list") {
      const { emails } = await callPlatformApi<{ emails: OutboxSummary[] }>(target, "GET", outbox);
      if (values.json) return void console.log(JSON.stringify({ emails }, null, 2));
      if (!emails.length) return void console.log(`No email sent by "${target.slug}" yet.`);
      for (const e of emails) console.log(`${e.sentAt}  ${e.id}  ${oneLine(e.to.join(", "))}  ${oneLine(e.subject)}`);
      return;
    }
    const { email } = await callPlatformApi<{ email: OutboxEmail }>(
      target,
      "GET",
      `${outbox}/${encodeURIComponent(id!)}`,
    );
    if (values.json) return void console.log(JSON.stringify({ email }, null, 2));
    console.log(`Id:      ${email.id}`);
    console.log(`Date:    ${email.sentAt}`);
    console.log(`From:    ${oneLine(email.from)}`);
    console.log(`To:      ${oneLine(email.to.join(", "))}`);
    console.log(`Subject: ${oneLine(email.subject)}`);
    console.log("");
    console.log(email.html ? htmlAsText(email.html) : (email.text ?? ""));
  },
};
