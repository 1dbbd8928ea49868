/** `$VAR` and `${VAR}` replaced from the host environment when set (Python's os.path.expandvars, as mini-swe-agent does). */
export function expandVars(value: string, env: NodeJS.ProcessEnv): string {
  return value.replace(
    /\$(\w+)|\$\{([^}]+)\}/g,
    (match, bare: string | undefined, braced: string | undefined) => {
      const name = bare ?? braced ?? "";
      return env[name] ?? match;
    },
  );
}

/**
 * Each action's variables in a container or pod, as NAME=value entries: forwarded host values (those set),
 * then `env` with $VARs expanded from the host.
 */
export function actionEnv(
  config: { forward_env: string[]; env: Record<string, string> },
  hostEnv: NodeJS.ProcessEnv = process.env,
): string[] {
  const env: string[] = [];
  for (const name of config.forward_env) {
    const value = hostEnv[name];
    if (value !== undefined) env.push(`${name}=${value}`);
  }
  for (const [name, value] of Object.entries(config.env)) env.push(`${name}=${expandVars(value, hostEnv)}`);
  return env;
}
