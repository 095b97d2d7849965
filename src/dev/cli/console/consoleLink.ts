import { readDevSession, stateDirFor } from "../dev/state/devState.ts";
import { CliError } from "../commandLine.ts";
import { credentialsPath } from "../credentials/credentialsFile.ts";
import { loggedInToken, resolvePlatformApi } from "../platformTarget.ts";
import { projectFolder } from "../projectFolder.ts";

/** The console's address, and the link that signs it in (the CLI token in the fragment, never sent to a server). */
export interface ConsoleLink {
  url: string;
  signedIn: string;
}

/**
 * Which console `platform console` opens: with `--api URL`, that platform's
 * (`platform up` or deployed), signed in with the token `platform login`
 * stored for it (or $PLATFORM_TOKEN); else the `platform dev` running for
 * `--dir` (default: the current directory), signed in as its local CLI user.
 */
export function consoleLinkFor(
  values: { api?: string; dir?: string },
  env: NodeJS.ProcessEnv = process.env,
  file: string = credentialsPath(env),
): ConsoleLink {
  if (values.api !== undefined) {
    if (values.dir !== undefined) throw new CliError("Name the platform by --api or by --dir, not both.", 2);
    if (values.api === "") throw new CliError("--api needs a URL.", 2);
    const api = resolvePlatformApi(values.api, env, file)!;
    return link(`${api.apiUrl}/console/`, loggedInToken(api));
  }
  const projectDir = projectFolder(values.dir);
  const session = readDevSession(stateDirFor(projectDir));
  if (!session)
    throw new CliError(
      `No \`platform dev\` is running for ${projectDir}: start it, pass --dir <project>, or --api URL for a platform you logged in to.`,
    );
  return link(`${session.apiUrl}/console/`, session.cliToken);
}

// The fragment signs the browser in (the console reads it and drops it from the address bar).
const link = (url: string, token: string): ConsoleLink => ({ url, signedIn: `${url}#token=${token}` });
